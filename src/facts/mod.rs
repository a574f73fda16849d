//! Facts about the world the server will run in: the GPUs (NVML or a topology file), which of
//! them the server will use, the model, the environment, the installed packages, and the host
//! around the GPUs (`/dev/shm`, container, RDMA devices).

pub(crate) mod accelerators;
pub(crate) mod env;
pub mod gpus;
pub mod host;
pub(crate) mod host_record;
pub(crate) mod hub;
pub mod model;
pub mod nvml;
pub mod packages;
pub mod scheduler;
pub mod topology;

pub use env::Env;
pub use packages::Packages;
#[cfg(test)]
pub(crate) use topology::Link;
pub use topology::{Gpu, Topology};
