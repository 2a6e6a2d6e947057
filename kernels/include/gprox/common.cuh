// Common prelude of every kernel source: the switch between nvcc and the host emulator.
//
// Under nvcc the CUDA headers provide everything and GPROX_KERNEL_EXPORT expands to nothing;
// under the host compiler emu.cuh supplies the CUDA vocabulary and GPROX_KERNEL_EXPORT emits an
// `extern "C"` launcher `gprox_emu_launch_<name>(grid, block, const Params*)` for Rust.
#pragma once

#ifdef __CUDACC__
#include <stdint.h>
#define GPROX_KERNEL_EXPORT(name, Params)
/// A device function kept out of line (large, rarely reached code in a hot kernel).
#define GPROX_NOINLINE __noinline__
#else
#include "gprox/emu.cuh"
#define GPROX_NOINLINE
#endif

/// Declares a kernel: `GPROX_KERNEL(name, Params)` followed by the body, parameter `p`.
#define GPROX_KERNEL(name, Params) \
  extern "C" __global__ void __launch_bounds__(GPROX_MAX_BLOCK) name(const Params p)

/// A kernel whose registers are budgeted for at least `min_blocks` resident blocks per
/// multiprocessor (`__launch_bounds__(GPROX_MAX_BLOCK, min_blocks)`): the persistent traversal
/// tasks, whose count comes from the occupancy.
#define GPROX_KERNEL_OCCUPANCY(name, Params, min_blocks) \
  extern "C" __global__ void __launch_bounds__(GPROX_MAX_BLOCK, min_blocks) name(const Params p)

/// Largest block the kernels are written for (shared arrays are sized by it).
#define GPROX_MAX_BLOCK 256

namespace gprox {
/// Global index of the calling thread in a 1-D launch.
__device__ __forceinline__ uint32_t global_thread() { return blockIdx.x * blockDim.x + threadIdx.x; }
/// Device pointer from the u64 address stored in a params struct.
template <class T>
__device__ __forceinline__ T* dev_ptr(uint64_t address) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(address));
}
}  // namespace gprox
