//! Replaces this process with SGLang (`execve`): same PID, signals straight to SGLang.
