//! Which topology GPUs the server will use: `CUDA_VISIBLE_DEVICES` (indices or UUIDs, honouring
//! `CUDA_DEVICE_ORDER`), then SGLang's `--base-gpu-id` / `--gpu-id-step` over the visible list.
