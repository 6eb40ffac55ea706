// The library functions of launch/library_calls.h: kbench's `__wrap_<function>`s, exported by the
// kbench executable (CMakeLists.txt) for extensions to bind to. Each finds the library's own
// function, calls it, and hands what it wrote to the observer. cuDNN's types are all handles,
// pointers and enumerations, passed on as they came: kbench needs no cuDNN headers.
#include "launch/library_calls.h"

#include <atomic>
#include <functional>
#include <initializer_list>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#ifdef KBENCH_WITH_CUDA
#include <ATen/ATen.h>
#endif

namespace kbench::launch {
namespace {

std::atomic<LibraryObserver> g_observer{nullptr};

using CudnnStatus = int;  // cudnnStatus_t: 0 is success
constexpr CudnnStatus kCudnnNotSupported = 9;

#ifdef KBENCH_WITH_CUDA
// The library's own function: in the process's global scope, or in a library loaded beside an
// extension (its own -lcublas lands in the extension's local scope).
void* library_function(const char* name, std::initializer_list<const char*> libraries) {
  if (void* f = ::dlsym(RTLD_DEFAULT, name)) return f;
  for (const char* library : libraries)
    if (void* handle = ::dlopen(library, RTLD_LAZY | RTLD_NOLOAD))
      if (void* f = ::dlsym(handle, name)) return f;
  return nullptr;
}
#define KBENCH_CUBLAS_LIBRARIES {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}
#define KBENCH_CUBLASLT_LIBRARIES {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}
#define KBENCH_CUDNN_LIBRARIES {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"}

at::ScalarType scalar_type(cudaDataType type) {
  switch (type) {
    case CUDA_R_16F: return at::kHalf;
    case CUDA_R_16BF: return at::kBFloat16;
    case CUDA_R_64F: return at::kDouble;
    default: return at::kFloat;
  }
}

// A column-major matrix of `rows` x `cols` with leading dimension `ld`, column by column; `batches`
// of them `stride` elements apart.
at::Tensor matrix(void* data, at::ScalarType type, int64_t rows, int64_t cols, int64_t ld, int64_t batches = 1,
                  int64_t stride = 0) {
  const auto options = at::TensorOptions().dtype(type).device(at::kCUDA);
  return at::from_blob(data, {batches, cols, rows}, {stride, ld, 1}, options);
}

// Hands the result to the observer once `stream` has finished it.
void observe(const char* function, cudaStream_t stream, const std::function<at::Tensor()>& result) {
  const auto observer = g_observer.load();
  if (!observer) return;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess || status != cudaStreamCaptureStatusNone) {
    cudaGetLastError();
    observer(function, at::Tensor());
    return;
  }
  if (cudaStreamSynchronize(stream) != cudaSuccess) return;  // the caller's next call reports the error
  observer(function, result());
}

template <typename Function>
Function real(const char* name, std::initializer_list<const char*> libraries) {
  return reinterpret_cast<Function>(library_function(name, libraries));
}

cudaStream_t stream_of(cublasHandle_t handle) {
  static const auto get = real<decltype(&cublasGetStream_v2)>("cublasGetStream_v2", KBENCH_CUBLAS_LIBRARIES);
  cudaStream_t stream = nullptr;
  if (get) get(handle, &stream);
  return stream;
}
#endif

}  // namespace

void set_library_observer(LibraryObserver observer) { g_observer = observer; }

}  // namespace kbench::launch

using kbench::launch::CudnnStatus;

#ifdef KBENCH_WITH_CUDA
using namespace kbench::launch;

extern "C" cublasStatus_t __wrap_cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                                int n, int k, const float* alpha, const float* A, int lda,
                                                const float* B, int ldb, const float* beta, float* C, int ldc) {
  static const auto f = real<decltype(&cublasSgemm_v2)>("cublasSgemm_v2", KBENCH_CUBLAS_LIBRARIES);
  if (!f) return CUBLAS_STATUS_NOT_SUPPORTED;
  const auto status = f(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  if (status == CUBLAS_STATUS_SUCCESS)
    observe("cublasSgemm_v2", stream_of(h), [&] { return matrix(C, at::kFloat, m, n, ldc); });
  return status;
}

extern "C" cublasStatus_t __wrap_cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                                           cublasOperation_t tb, int m, int n, int k,
                                                           const float* alpha, const float* A, int lda,
                                                           long long sa, const float* B, int ldb, long long sb,
                                                           const float* beta, float* C, int ldc, long long sc,
                                                           int batches) {
  static const auto f =
      real<decltype(&cublasSgemmStridedBatched)>("cublasSgemmStridedBatched", KBENCH_CUBLAS_LIBRARIES);
  if (!f) return CUBLAS_STATUS_NOT_SUPPORTED;
  const auto status = f(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batches);
  if (status == CUBLAS_STATUS_SUCCESS)
    observe("cublasSgemmStridedBatched", stream_of(h), [&] { return matrix(C, at::kFloat, m, n, ldc, batches, sc); });
  return status;
}

extern "C" cublasStatus_t __wrap_cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                              int n, int k, const void* alpha, const void* A, cudaDataType at,
                                              int lda, const void* B, cudaDataType bt, int ldb, const void* beta,
                                              void* C, cudaDataType ct, int ldc, cublasComputeType_t compute,
                                              cublasGemmAlgo_t algo) {
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  static const auto f = real<GemmEx>("cublasGemmEx", KBENCH_CUBLAS_LIBRARIES);  // decltype: C++ overloads it
  if (!f) return CUBLAS_STATUS_NOT_SUPPORTED;
  const auto status = f(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, compute, algo);
  if (status == CUBLAS_STATUS_SUCCESS)
    observe("cublasGemmEx", stream_of(h), [&] { return matrix(C, scalar_type(ct), m, n, ldc); });
  return status;
}

extern "C" cublasStatus_t __wrap_cublasGemmStridedBatchedEx(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void* alpha,
    const void* A, cudaDataType at, int lda, long long sa, const void* B, cudaDataType bt, int ldb, long long sb,
    const void* beta, void* C, cudaDataType ct, int ldc, long long sc, int batches, cublasComputeType_t compute,
    cublasGemmAlgo_t algo) {
  using GemmStridedBatchedEx = cublasStatus_t (*)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*, cudaDataType, int,
      long long, const void*, cudaDataType, int, long long, const void*, void*, cudaDataType, int, long long, int,
      cublasComputeType_t, cublasGemmAlgo_t);
  static const auto f = real<GemmStridedBatchedEx>("cublasGemmStridedBatchedEx", KBENCH_CUBLAS_LIBRARIES);
  if (!f) return CUBLAS_STATUS_NOT_SUPPORTED;
  const auto status =
      f(h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C, ct, ldc, sc, batches, compute, algo);
  if (status == CUBLAS_STATUS_SUCCESS)
    observe("cublasGemmStridedBatchedEx", stream_of(h),
            [&] { return matrix(C, scalar_type(ct), m, n, ldc, batches, sc); });
  return status;
}

extern "C" cublasStatus_t __wrap_cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void* alpha,
                                                const void* A, cublasLtMatrixLayout_t a_layout, const void* B,
                                                cublasLtMatrixLayout_t b_layout, const void* beta, const void* C,
                                                cublasLtMatrixLayout_t c_layout, void* D,
                                                cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t* algo,
                                                void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  static const auto f = real<decltype(&cublasLtMatmul)>("cublasLtMatmul", KBENCH_CUBLASLT_LIBRARIES);
  static const auto get = real<decltype(&cublasLtMatrixLayoutGetAttribute)>("cublasLtMatrixLayoutGetAttribute",
                                                                            KBENCH_CUBLASLT_LIBRARIES);
  if (!f || !get) return CUBLAS_STATUS_NOT_SUPPORTED;
  const auto status =
      f(h, desc, alpha, A, a_layout, B, b_layout, beta, C, c_layout, D, d_layout, algo, workspace, workspace_bytes, stream);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  observe("cublasLtMatmul", stream, [&] {
    uint32_t type = CUDA_R_32F;
    int32_t order = CUBLASLT_ORDER_COL, batches = 1;
    uint64_t rows = 0, cols = 0;
    int64_t ld = 0, stride = 0;
    size_t written = 0;
    get(d_layout, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type, &written);
    get(d_layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order, &written);
    get(d_layout, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows, &written);
    get(d_layout, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof cols, &written);
    get(d_layout, CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof ld, &written);
    get(d_layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batches, sizeof batches, &written);
    get(d_layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride, &written);
    const auto t = scalar_type(static_cast<cudaDataType>(type));
    const auto r = static_cast<int64_t>(rows), c = static_cast<int64_t>(cols);
    return order == CUBLASLT_ORDER_ROW ? matrix(D, t, c, r, ld, batches, stride)  // rows of a row-major matrix
                                       : matrix(D, t, r, c, ld, batches, stride);
  });
  return status;
}

// cudnnConvolutionForward(handle, alpha, xDesc, x, wDesc, w, convDesc, algo, workSpace,
// workSpaceSizeInBytes, beta, yDesc, y): y is read as float32, the only dtype kbench's problems have.
extern "C" CudnnStatus __wrap_cudnnConvolutionForward(void* h, const void* alpha, void* x_desc, const void* x,
                                                      void* w_desc, const void* w, void* conv_desc, int algo,
                                                      void* workspace, size_t workspace_bytes, const void* beta,
                                                      void* y_desc, void* y) {
  using Forward = CudnnStatus (*)(void*, const void*, void*, const void*, void*, const void*, void*, int, void*, size_t,
                                  const void*, void*, void*);
  using Size = CudnnStatus (*)(void*, size_t*);
  using Stream = CudnnStatus (*)(void*, cudaStream_t*);
  static const auto f = real<Forward>("cudnnConvolutionForward", KBENCH_CUDNN_LIBRARIES);
  static const auto size = real<Size>("cudnnGetTensorSizeInBytes", KBENCH_CUDNN_LIBRARIES);
  static const auto get_stream = real<Stream>("cudnnGetStream", KBENCH_CUDNN_LIBRARIES);
  if (!f || !size || !get_stream) return kbench::launch::kCudnnNotSupported;
  const auto status = f(h, alpha, x_desc, x, w_desc, w, conv_desc, algo, workspace, workspace_bytes, beta, y_desc, y);
  if (status != 0) return status;
  cudaStream_t stream = nullptr;
  size_t bytes = 0;
  if (get_stream(h, &stream) == 0 && size(y_desc, &bytes) == 0)
    observe("cudnnConvolutionForward", stream,
            [&] { return matrix(y, at::kFloat, static_cast<int64_t>(bytes / sizeof(float)), 1, 1); });
  return status;
}

#else
// kbench built without CUDA (CI) builds and loads extensions, which bind to these: each refuses.
#define KBENCH_REFUSE(name, status) \
  extern "C" int __wrap_##name() { return status; }
KBENCH_REFUSE(cublasSgemm_v2, CUBLAS_STATUS_NOT_SUPPORTED)
KBENCH_REFUSE(cublasSgemmStridedBatched, CUBLAS_STATUS_NOT_SUPPORTED)
KBENCH_REFUSE(cublasGemmEx, CUBLAS_STATUS_NOT_SUPPORTED)
KBENCH_REFUSE(cublasGemmStridedBatchedEx, CUBLAS_STATUS_NOT_SUPPORTED)
KBENCH_REFUSE(cublasLtMatmul, CUBLAS_STATUS_NOT_SUPPORTED)
KBENCH_REFUSE(cudnnConvolutionForward, kbench::launch::kCudnnNotSupported)
#endif
