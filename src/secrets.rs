//! Secret-bearing arguments and variables, masked as `***` in every output.
