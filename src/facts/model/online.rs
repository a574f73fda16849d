//! Online quantisation: `--quantization fp8` on a 16-bit checkpoint.
//!
//! Every release read (0.4.10.post2, 0.5.5, 0.5.10.post1, 0.5.23) creates the layers' weights in
//! the checkpoint's dtype when the checkpoint is not FP8-serialised, loads the whole model, and
//! only then quantises module by module (`process_weights_after_loading`); `--load-format
//! layered` quantises each layer before loading the next. So the checkpoint's full size is
//! resident at the peak, and the quantised size after it.

use super::{ModelFacts, WeightSource, estimate_weight_bytes};

/// `--quantization` methods SGLang applies online to an unquantised checkpoint.
const ONLINE: &[&str] = &["fp8"];

/// Records the load peak and turns `weight_bytes` into the quantised size.
pub(super) fn apply(f: &mut ModelFacts) {
    let online = f.checkpoint_quant_method.is_none()
        && f.quant_method
            .as_deref()
            .is_some_and(|q| ONLINE.contains(&q))
        && f.dtype_bytes() >= 2;
    let Some(bytes) = f.weight_bytes.filter(|_| online) else {
        return;
    };
    // The estimate's own ratio of quantised to unquantised bytes: embeddings, norms, routers
    // and the towers stay in the model dtype.
    let unquantised = {
        let mut g = f.clone();
        g.weight_bits = None;
        estimate_weight_bytes(&g).map(|b| b.saturating_add(f.encoder_bytes()))
    };
    let quantised = estimate_weight_bytes(f).map(|b| b.saturating_add(f.encoder_bytes()));
    let (Some(u), Some(q)) = (unquantised, quantised) else {
        return;
    };
    if u == 0 {
        return;
    }
    match f.weight_source {
        // The estimate already priced the weights quantised.
        WeightSource::Estimate => f.online_quant_load_bytes = Some(u),
        _ => {
            f.online_quant_load_bytes = Some(bytes);
            f.weight_bytes = Some((bytes as f64 * q as f64 / u as f64) as u64);
        }
    }
}
