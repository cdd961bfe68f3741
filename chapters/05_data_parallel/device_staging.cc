// Collectives on host buffers staged through GPU memory (see device_staging.h).
#include "chapters/05_data_parallel/device_staging.h"

#include <cuda_runtime.h>

#include "common/check.h"
#include "common/cuda.h"

namespace book::ddp {

DeviceStagedCommunicator::DeviceStagedCommunicator(std::unique_ptr<coll::Communicator> device_comm,
                                                   int device)
    : Communicator(device_comm ? device_comm->rank() : 0, device_comm ? device_comm->size() : 1,
                   device_comm ? device_comm->group() + "/staged" : "staged"),
      device_comm_(std::move(device_comm)),
      device_(device) {
  BOOK_CHECK(device_comm_, "DeviceStagedCommunicator: no device communicator given");
}

DeviceStagedCommunicator::~DeviceStagedCommunicator() {
  for (void* p : scratch_)
    if (p) cudaFree(p);  // a destructor must not throw; a broken context shows elsewhere
}

void* DeviceStagedCommunicator::device_scratch(std::size_t bytes, int which) {
  BOOK_CUDA_CHECK(cudaSetDevice(device_));  // this thread may not have used the GPU yet
  if (bytes > scratch_bytes_[which]) {
    if (scratch_[which]) BOOK_CUDA_CHECK(cudaFree(scratch_[which]));
    scratch_[which] = nullptr;
    BOOK_CUDA_CHECK(cudaMalloc(&scratch_[which], bytes));
    scratch_bytes_[which] = bytes;
  }
  return scratch_[which];
}

void DeviceStagedCommunicator::all_reduce(coll::Buffer data, coll::ReduceOp op, coll::Algorithm) {
  void* d = device_scratch(data.bytes(), 0);
  BOOK_CUDA_CHECK(cudaMemcpy(d, data.data, data.bytes(), cudaMemcpyHostToDevice));
  device_comm_->all_reduce({d, data.count, data.dtype}, op, coll::Algorithm::kNative);
  BOOK_CUDA_CHECK(cudaMemcpy(data.data, d, data.bytes(), cudaMemcpyDeviceToHost));
}

void DeviceStagedCommunicator::reduce_scatter(coll::ConstBuffer input, coll::Buffer output,
                                              coll::ReduceOp op, coll::Algorithm) {
  void* in = device_scratch(input.bytes(), 0);
  void* out = device_scratch(output.bytes(), 1);
  BOOK_CUDA_CHECK(cudaMemcpy(in, input.data, input.bytes(), cudaMemcpyHostToDevice));
  device_comm_->reduce_scatter(coll::ConstBuffer{in, input.count, input.dtype},
                               {out, output.count, output.dtype}, op, coll::Algorithm::kNative);
  BOOK_CUDA_CHECK(cudaMemcpy(output.data, out, output.bytes(), cudaMemcpyDeviceToHost));
}

void DeviceStagedCommunicator::all_gather(coll::ConstBuffer input, coll::Buffer output,
                                          coll::Algorithm) {
  void* in = device_scratch(input.bytes(), 0);
  void* out = device_scratch(output.bytes(), 1);
  BOOK_CUDA_CHECK(cudaMemcpy(in, input.data, input.bytes(), cudaMemcpyHostToDevice));
  device_comm_->all_gather(coll::ConstBuffer{in, input.count, input.dtype},
                           {out, output.count, output.dtype}, coll::Algorithm::kNative);
  BOOK_CUDA_CHECK(cudaMemcpy(output.data, out, output.bytes(), cudaMemcpyDeviceToHost));
}

void DeviceStagedCommunicator::broadcast(coll::Buffer data, int root) {
  void* d = device_scratch(data.bytes(), 0);
  BOOK_CUDA_CHECK(cudaMemcpy(d, data.data, data.bytes(), cudaMemcpyHostToDevice));
  device_comm_->broadcast({d, data.count, data.dtype}, root);
  BOOK_CUDA_CHECK(cudaMemcpy(data.data, d, data.bytes(), cudaMemcpyDeviceToHost));
}

void DeviceStagedCommunicator::barrier() {
  BOOK_CUDA_CHECK(cudaSetDevice(device_));
  device_comm_->barrier();
}

std::unique_ptr<coll::Communicator> DeviceStagedCommunicator::split(int color, int key) {
  BOOK_CUDA_CHECK(cudaSetDevice(device_));
  std::unique_ptr<coll::Communicator> inner = device_comm_->split(color, key);
  if (!inner) return nullptr;
  auto staged = std::make_unique<DeviceStagedCommunicator>(std::move(inner), device_);
  pass_settings_to(*staged);
  return staged;
}

void DeviceStagedCommunicator::transport_send(const void*, std::size_t, int, int) {
  throw Error(where() + ": point-to-point calls are not staged to the GPU; use collectives");
}

void DeviceStagedCommunicator::transport_recv(void*, std::size_t, int, int) {
  throw Error(where() + ": point-to-point calls are not staged to the GPU; use collectives");
}

void DeviceStagedCommunicator::transport_sendrecv(const void*, std::size_t, int, void*, std::size_t,
                                                  int, int) {
  throw Error(where() + ": point-to-point calls are not staged to the GPU; use collectives");
}

}  // namespace book::ddp
