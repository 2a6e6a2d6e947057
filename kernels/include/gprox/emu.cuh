// gprox host emulator: runs CUDA C++ kernels on the CPU (DESIGN.md §3, path 3).
//
// Compiled only when __CUDACC__ is not defined (g++ -std=c++20). Model:
// * one OS thread per CUDA thread of a block (a persistent pool, reused across blocks);
// * the blocks of a grid run one after another;
// * __syncthreads is a std::barrier over the block's threads;
// * __shared__ is `static`: per-kernel storage, private to the (single) running block;
// * threadIdx / blockIdx are thread-locals, blockDim / gridDim globals of the running launch;
// * atomics go through std::atomic_ref (sequentially consistent), __threadfence is a fence;
// * one global lock serialises launches (cargo runs tests in parallel).
// * warp intrinsics (ballot, any/all, shfl*, syncwarp) exchange values through one slot per
//   thread and a barrier per warp.
// Limits: the CPU's stronger memory order hides a missing __threadfence; divergent warp
// operations are not modelled (every lane of a warp must reach each warp intrinsic, and every
// thread of a block each __syncthreads).
#pragma once
#ifdef __CUDACC__
#error "emu.cuh is the host emulator; nvcc builds use the CUDA headers"
#endif

#include <atomic>
#include <barrier>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict
#define __launch_bounds__(...)

struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x, y, z; };

namespace gprox_emu {
inline thread_local uint3 thread_idx{0, 0, 0};
inline thread_local uint3 block_idx{0, 0, 0};
inline dim3 block_dim{1, 1, 1};
inline dim3 grid_dim{1, 1, 1};

/// Persistent worker threads; worker `id` plays threadIdx.x == id of the running block.
/// Hand-off through atomics with wait/notify (futexes): no mutex on the hot path.
class Pool {
 public:
  /// Runs `body(params)` on `threads` workers as block `bx`, and waits for all of them.
  /// Called under the launch lock only.
  void run_block(unsigned bx, unsigned threads, void (*body)(const void*), const void* params) {
    while (spawned_ < threads) {
      unsigned id = spawned_++;
      const std::uint64_t now = generation_.load(std::memory_order_relaxed);
      std::thread([this, id, now] { work(id, now); }).detach();
    }
    std::barrier<> bar(static_cast<std::ptrdiff_t>(threads));
    barrier_ = &bar;
    // One barrier per warp (the last one partial) for the warp intrinsics.
    const unsigned warps = (threads + 31) / 32;
    std::unique_ptr<std::barrier<>> warp_bars[32];
    for (unsigned w = 0; w < warps; ++w) {
      const unsigned lanes = threads - 32 * w < 32 ? threads - 32 * w : 32;
      warp_bars[w] = std::make_unique<std::barrier<>>(static_cast<std::ptrdiff_t>(lanes));
      warp_barriers_[w] = warp_bars[w].get();
    }
    active_ = threads;
    block_x_ = bx;
    body_ = body;
    params_ = params;
    // Every spawned worker acknowledges every block (idle ones without running it), so no worker
    // can still be reading this block's fields when the next block writes them.
    remaining_.store(spawned_, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (unsigned left = remaining_.load(std::memory_order_acquire); left != 0;
         left = remaining_.load(std::memory_order_acquire)) {
      remaining_.wait(left, std::memory_order_acquire);
    }
    barrier_ = nullptr;
  }
  /// The barrier of the running block.
  std::barrier<>* barrier() const { return barrier_; }
  /// The barrier of warp `w` of the running block.
  std::barrier<>* warp_barrier(unsigned w) const { return warp_barriers_[w]; }
  /// One exchange slot per thread of the block (warp intrinsics).
  std::uint64_t* slots() { return slots_; }

 private:
  /// Worker loop; `seen` is the generation current when the worker was spawned.
  void work(unsigned id, std::uint64_t seen) {
    for (;;) {
      generation_.wait(seen, std::memory_order_acquire);
      const std::uint64_t g = generation_.load(std::memory_order_acquire);
      if (g == seen) continue;
      seen = g;
      if (id < active_) {
        thread_idx = uint3{id, 0, 0};
        block_idx = uint3{block_x_, 0, 0};
        body_(params_);
      }
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_one();
    }
  }
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<unsigned> remaining_{0};
  unsigned spawned_ = 0, active_ = 0, block_x_ = 0;
  void (*body_)(const void*) = nullptr;
  const void* params_ = nullptr;
  std::barrier<>* barrier_ = nullptr;
  std::barrier<>* warp_barriers_[32] = {};
  std::uint64_t slots_[1024] = {};
};

/// Lane count of the calling thread's warp (32 except for a partial last warp).
inline unsigned warp_width() {
  const unsigned base = thread_idx.x / 32 * 32;
  return block_dim.x - base < 32 ? block_dim.x - base : 32;
}

/// The pool lives for the whole process (never destroyed: its threads are detached).
inline Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}
inline std::mutex& launch_lock() {
  static std::mutex* m = new std::mutex;
  return *m;
}

/// Launches `body` over a 1-D grid; 0 on success, 1 for an invalid configuration.
inline int launch(unsigned grid, unsigned block, void (*body)(const void*), const void* params) {
  if (grid == 0 || block == 0 || block > 1024) return 1;
  std::lock_guard<std::mutex> guard(launch_lock());
  block_dim = dim3{block, 1, 1};
  grid_dim = dim3{grid, 1, 1};
  for (unsigned b = 0; b < grid; ++b) pool().run_block(b, block, body, params);
  return 0;
}
}  // namespace gprox_emu

#define threadIdx (::gprox_emu::thread_idx)
#define blockIdx (::gprox_emu::block_idx)
#define blockDim (::gprox_emu::block_dim)
#define gridDim (::gprox_emu::grid_dim)

inline void __syncthreads() { ::gprox_emu::pool().barrier()->arrive_and_wait(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// Warp intrinsics through per-warp slots: every lane of the warp must call (converged), as the
// kernels guarantee; the mask is honoured for ballot and ignored otherwise.
namespace gprox_emu {
/// Each lane publishes `bits`; returns lane `src`'s bits (own bits if `src` is not in the warp).
inline std::uint64_t warp_exchange(std::uint64_t bits, unsigned src) {
  const unsigned base = thread_idx.x / 32 * 32;
  std::uint64_t* slots = pool().slots();
  std::barrier<>& bar = *pool().warp_barrier(thread_idx.x / 32);
  slots[thread_idx.x] = bits;
  bar.arrive_and_wait();
  const std::uint64_t got = src < warp_width() ? slots[base + src] : bits;
  bar.arrive_and_wait();
  return got;
}
template <class T> inline T warp_shuffle(T v, unsigned src) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = warp_exchange(bits, src);
  T r;
  std::memcpy(&r, &bits, sizeof(T));
  return r;
}
inline unsigned lane() { return thread_idx.x % 32; }
}  // namespace gprox_emu

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  const unsigned base = threadIdx.x / 32 * 32;
  std::uint64_t* slots = ::gprox_emu::pool().slots();
  std::barrier<>& bar = *::gprox_emu::pool().warp_barrier(threadIdx.x / 32);
  slots[threadIdx.x] = predicate != 0;
  bar.arrive_and_wait();
  unsigned r = 0;
  for (unsigned l = 0; l < ::gprox_emu::warp_width(); ++l) r |= (slots[base + l] ? 1u : 0u) << l;
  bar.arrive_and_wait();
  return r & mask;
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned mask, int predicate) {
  const unsigned width = ::gprox_emu::warp_width();
  const unsigned lanes = width == 32 ? 0xffffffffu : (1u << width) - 1;
  return __ballot_sync(mask, predicate) == (mask & lanes);
}
inline unsigned __activemask() {
  const unsigned width = ::gprox_emu::warp_width();
  return width == 32 ? 0xffffffffu : (1u << width) - 1;
}
inline void __syncwarp(unsigned = 0xffffffffu) {
  ::gprox_emu::pool().warp_barrier(threadIdx.x / 32)->arrive_and_wait();
}
template <class T> inline T __shfl_sync(unsigned, T v, int src, int width = 32) {
  const unsigned l = ::gprox_emu::lane();
  return ::gprox_emu::warp_shuffle(v, l / width * width + static_cast<unsigned>(src) % width);
}
template <class T> inline T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
  const unsigned l = ::gprox_emu::lane();
  const unsigned src = l % width + delta < static_cast<unsigned>(width) ? l + delta : l;
  return ::gprox_emu::warp_shuffle(v, src);
}
template <class T> inline T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
  const unsigned l = ::gprox_emu::lane();
  const unsigned src = l % width >= delta ? l - delta : l;
  return ::gprox_emu::warp_shuffle(v, src);
}
template <class T> inline T __shfl_xor_sync(unsigned, T v, int lane_mask, int width = 32) {
  const unsigned l = ::gprox_emu::lane();
  const unsigned src = l ^ static_cast<unsigned>(lane_mask);
  return ::gprox_emu::warp_shuffle(v, src / width == l / width ? src : l);
}
inline int __popc(unsigned x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned>(x)) + 1; }

template <class T> inline T atomicAdd(T* p, std::type_identity_t<T> v) { return std::atomic_ref<T>(*p).fetch_add(v); }
template <class T> inline T atomicExch(T* p, std::type_identity_t<T> v) { return std::atomic_ref<T>(*p).exchange(v); }
template <class T>
inline T atomicCAS(T* p, std::type_identity_t<T> expected, std::type_identity_t<T> desired) {
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired);
  return expected;  // the old value either way
}
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a < b ? b : a; }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a < b ? b : a; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a < b ? b : a; }
template <class T> inline T __ldcg(const T* p) { return *p; }

inline int __clzll(long long x) { return std::countl_zero(static_cast<unsigned long long>(x)); }
inline int __clz(int x) { return std::countl_zero(static_cast<unsigned>(x)); }

/// f64 -> f32 rounded down / up (the CUDA intrinsics), from the round-to-nearest conversion.
inline float __double2float_rd(double d) {
  float f = static_cast<float>(d);
  return static_cast<double>(f) > d ? std::nextafterf(f, -INFINITY) : f;
}
inline float __double2float_ru(double d) {
  float f = static_cast<float>(d);
  return static_cast<double>(f) < d ? std::nextafterf(f, INFINITY) : f;
}

/// Exports `name` (a kernel taking `const Params`) as `gprox_emu_launch_<name>` for Rust.
#define GPROX_KERNEL_EXPORT(name, Params)                                                  \
  extern "C" int gprox_emu_launch_##name(unsigned grid, unsigned block, const void* p) { \
    return ::gprox_emu::launch(                                                         \
        grid, block, [](const void* q) { name(*static_cast<const Params*>(q)); }, p);   \
  }
