//! Process-wide allocator settings for the CPU's large tensors.

/// Tells glibc's allocator to keep freed memory in the process (once, process-wide).
/// Tensors of a megabyte or more, allocated and freed on every call (a tai batch's
/// activations, a learner step's policy logits and their gradients: 11 MB each at
/// shogi's batch of 256), otherwise go back to the kernel (blocks above the mmap
/// threshold, heap tops above the trim threshold) and come back as page faults of
/// zeroed pages (docs/PERFORMANCE.md has the profiles). Small tensors (standard shogi's
/// inference) are served from the heap either way.
pub(crate) fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: mallopt only changes allocator parameters; these two are
            // thresholds, valid at any time and from any thread.
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
                libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
            }
        });
    }
}
