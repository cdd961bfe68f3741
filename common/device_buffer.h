/// @file
/// Device memory that frees itself: the CUDA counterpart of book::AlignedBuffer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <limits>
#include <span>
#include <utility>

#include "common/check.h"
#include "common/cuda.h"

namespace book::cuda {

/// `size` elements of `T` in device memory (cudaMalloc'd, cudaFree'd by the destructor).
/// Movable (the moved-from buffer is empty), not copyable. Elements start uninitialised; tests
/// call fill_poison() so that a kernel that forgets to write an element is caught.
template <typename T>
class DeviceBuffer {
 public:
  /// An empty buffer (no allocation, data() is null).
  DeviceBuffer() = default;

  /// Allocates `size` elements on the current device (none for size 0).
  /// @throws book::Error if the size overflows or cudaMalloc fails.
  explicit DeviceBuffer(std::size_t size) : size_(size) {
    BOOK_CHECK(size <= std::numeric_limits<std::size_t>::max() / sizeof(T),
               "DeviceBuffer of " << size << " elements of " << sizeof(T)
                                  << " bytes overflows the byte count");
    if (size == 0) return;
    void* raw = nullptr;
    BOOK_CUDA_CHECK(cudaMalloc(&raw, size * sizeof(T)));
    data_ = static_cast<T*>(raw);
  }

  /// Frees the memory (errors are ignored: a destructor must not throw, and a failed cudaFree
  /// means the context is already broken, which the next checked call reports).
  ~DeviceBuffer() { release(); }

  /// Takes over `other`'s memory; `other` becomes empty.
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

  /// Frees this buffer's memory, then takes over `other`'s; `other` becomes empty.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() { return data_; }                              ///< Device pointer to element 0.
  const T* data() const { return data_; }                  ///< Device pointer to element 0.
  std::size_t size() const { return size_; }               ///< Number of elements.
  std::size_t bytes() const { return size_ * sizeof(T); }  ///< Size in bytes.
  bool empty() const { return size_ == 0; }                ///< Whether size() is 0.

  /// Copies `host` (exactly size() elements) to the device; synchronous.
  /// @throws book::Error if the sizes differ or the copy fails.
  void copy_from_host(std::span<const T> host) {
    BOOK_CHECK(host.size() == size_, "copy_from_host: the host span has "
                                         << host.size() << " elements, the device buffer " << size_
                                         << "; they must match");
    if (size_ == 0) return;
    BOOK_CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }

  /// Copies the device buffer into `host` (exactly size() elements); synchronous.
  /// @throws book::Error if the sizes differ or the copy fails.
  void copy_to_host(std::span<T> host) const {
    BOOK_CHECK(host.size() == size_, "copy_to_host: the host span has "
                                         << host.size() << " elements, the device buffer " << size_
                                         << "; they must match");
    if (size_ == 0) return;
    BOOK_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
  }

  /// Sets every byte to 0xFF: NaN in f32, f64, bf16 and f16 (and -1 in signed integers), so an
  /// element a kernel failed to write stands out. Synchronous.
  void fill_poison() {
    if (size_ == 0) return;
    BOOK_CUDA_CHECK(cudaMemset(data_, 0xFF, bytes()));
    BOOK_CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  void release() noexcept {
    if (data_ != nullptr) cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace book::cuda
