//! The memory planner: SGLang's own defaults per version, KV capacity, and our safe plan.
