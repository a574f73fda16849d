//! Rendering a plan: the compact human report (stderr) and the JSON object (stdout).
