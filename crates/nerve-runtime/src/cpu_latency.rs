//! `realtime: {cpu_latency_us: N}`: a Linux CPU latency QoS request held for a whole run.
//!
//! An idle CPU halts, and leaving a halt costs time: tens of microseconds on a virtual machine,
//! where a halted vCPU goes back to the host and its caches go cold. Every wake-up of a node
//! whose CPU was idle pays it. While a process keeps `/dev/cpu_dma_latency` open with a value
//! written into it, the kernel keeps every CPU out of idle states slower to leave than that
//! value; 0 leaves only polling. The request is system-wide and ends when the file is closed,
//! so the runtime holds it from before the first node starts until the run ends (a killed
//! runtime's request goes with its process).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use nerve_spec::Dataflow;

use crate::error::RuntimeError;

/// The kernel's interface for CPU latency requests.
const DEVICE: &str = "/dev/cpu_dma_latency";

/// A CPU latency request, in force while this value lives.
#[derive(Debug)]
pub(crate) struct CpuLatency {
    _device: File,
}

impl CpuLatency {
    /// Holds the smallest `cpu_latency_us` any node of `df` asks for, or nothing when none does.
    ///
    /// # Errors
    /// [`RuntimeError::Realtime`], naming the node that asked, when the request cannot be made
    /// (nerve may not write the device, or the kernel has none).
    pub(crate) fn hold(df: &Dataflow) -> Result<Option<Self>, RuntimeError> {
        let asked = df.nodes.iter().filter_map(|n| Some((n.realtime.as_ref()?.cpu_latency_us?, &n.id))).min();
        let Some((us, node)) = asked else {
            return Ok(None);
        };
        let held = Self::request(Path::new(DEVICE), us).map_err(|e| RuntimeError::Realtime {
            node: node.clone(),
            problem: format!(
                "cannot request a CPU latency of {us} µs through {DEVICE}: {e}; run nerve as root or give \
                 its user write access to {DEVICE}"
            ),
        })?;
        tracing::info!(node = %node, us, "CPU latency request held for the run");
        Ok(Some(held))
    }

    fn request(device: &Path, us: u32) -> std::io::Result<Self> {
        let mut file = OpenOptions::new().write(true).open(device)?;
        // The kernel takes a native-endian 32-bit signed value (or a hex string).
        let value = i32::try_from(us).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        file.write_all(&value.to_ne_bytes())?;
        Ok(Self { _device: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_written_as_the_kernel_reads_it() {
        let device = std::env::temp_dir().join(format!("nerve-cpu-latency-{}", std::process::id()));
        File::create(&device).expect("create");
        let held = CpuLatency::request(&device, 37).expect("request");
        assert_eq!(std::fs::read(&device).expect("read"), 37i32.to_ne_bytes());
        drop(held);
        std::fs::remove_file(&device).expect("remove");
        let missing = CpuLatency::request(&device, 0).expect_err("no device");
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    }
}
