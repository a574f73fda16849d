//! The safetensors header reader: the 8-byte length, the JSON header and its tensors'
//! `data_offsets`. Input: a whole `.safetensors` file.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sglang_launch::facts::model::safetensors_bytes_in;

fuzz_target!(|data: &[u8]| {
    let _ = safetensors_bytes_in(data);
});
