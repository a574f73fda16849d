//! Applies [`crate::rules::Fix`] edits to the SGLang tokens and the environment.
