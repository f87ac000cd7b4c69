/* Exit 0 when a CUDA device is present (this program built with CUDA),
 * 77 otherwise: run_gpu.sh skips the "gpu" tests with it. The mock does
 * not count. */
#ifdef LOOM_TEST_CUDA
#include <cuda_runtime_api.h>
#endif
#include <stdio.h>

int main(void) {
#ifdef LOOM_TEST_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) return 0;
  printf("no CUDA device: skipped\n");
#else
  printf("Loom was built without CUDA: skipped\n");
#endif
  return 77;
}
