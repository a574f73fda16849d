//! Facts about the world the server will run in: the GPUs (NVML or a topology file), which of
//! them the server will use, the model, the environment, the installed packages, and the host
//! around the GPUs (`/dev/shm`, container, RDMA devices).

pub mod accelerators;
pub mod env;
pub mod gpus;
pub mod host;
pub mod host_record;
pub mod hub;
pub mod model;
pub mod nvml;
pub mod packages;
pub mod scheduler;
pub mod topology;

pub use env::Env;
pub use host::HostFacts;
pub use packages::Packages;
pub use topology::{Gpu, Link, Topology};
