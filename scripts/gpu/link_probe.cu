// Host-link probe: cudaHostRegister cost, pageable vs pinned H2D/D2H, threaded memcpy into pinned staging.
#include <cuda_runtime.h>
#include <omp.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
    const size_t gib = size_t{1} << 30;
    cudaFree(nullptr);
    for (size_t sz : {gib, 4 * gib}) {
        char* h = static_cast<char*>(std::malloc(sz));
        #pragma omp parallel for
        for (size_t i = 0; i < sz; i += 4096) h[i] = 1;
        void* d; cudaMalloc(&d, sz);
        double t0 = now(); cudaMemcpy(d, h, sz, cudaMemcpyHostToDevice); double t1 = now();
        cudaMemcpy(h, d, sz, cudaMemcpyDeviceToHost); double t2 = now();
        std::printf("pageable %.1f GiB: h2d %.1f GB/s d2h %.1f GB/s\n", sz / double(gib), sz / (t1 - t0) / 1e9, sz / (t2 - t1) / 1e9);
        t0 = now(); cudaHostRegister(h, sz, cudaHostRegisterPortable); t1 = now();
        cudaMemcpy(d, h, sz, cudaMemcpyHostToDevice); t2 = now();
        double t3 = now(); cudaMemcpy(h, d, sz, cudaMemcpyDeviceToHost); double t4 = now();
        cudaHostUnregister(h); double t5 = now();
        std::printf("register %.1f GiB: %.3f s (%.1f GB/s), unregister %.3f s; pinned h2d %.1f GB/s d2h %.1f GB/s\n", sz / double(gib), t1 - t0, sz / (t1 - t0) / 1e9, t5 - t4, sz / (t2 - t1) / 1e9, sz / (t4 - t3) / 1e9);
        // threaded memcpy into a pinned staging ring (64 MiB chunks), async h2d behind it
        const size_t chunk = 64 << 20; char* stage[2]; cudaHostAlloc((void**)&stage[0], chunk, 0); cudaHostAlloc((void**)&stage[1], chunk, 0);
        cudaStream_t s; cudaStreamCreate(&s); cudaEvent_t ev[2]; cudaEventCreate(&ev[0]); cudaEventCreate(&ev[1]);
        for (int nt : {4, 8, 16}) {
            omp_set_num_threads(nt);
            t0 = now();
            for (size_t off = 0, i = 0; off < sz; off += chunk, ++i) {
                int b = i & 1; cudaEventSynchronize(ev[b]);
                size_t len = std::min(chunk, sz - off);
                #pragma omp parallel for
                for (int p = 0; p < 64; ++p) { size_t a = len * p / 64, e = len * (p + 1) / 64; std::memcpy(stage[b] + a, h + off + a, e - a); }
                cudaMemcpyAsync(static_cast<char*>(d) + off, stage[b], len, cudaMemcpyHostToDevice, s); cudaEventRecord(ev[b], s);
            }
            cudaStreamSynchronize(s); t1 = now();
            std::printf("staged h2d %.1f GiB, %d threads: %.1f GB/s\n", sz / double(gib), nt, sz / (t1 - t0) / 1e9);
        }
        cudaFreeHost(stage[0]); cudaFreeHost(stage[1]); cudaFree(d); std::free(h);
    }
}
