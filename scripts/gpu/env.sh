# Sourced on the GPU machine from the repo root (scripts/gpu/pack made .gpu/): unpacks the binaries
# and libraries, finds CUDA's own (cuBLAS, cuSOLVER, NCCL) on that machine, sets the run environment.
mkdir -p /tmp/g && tar -C /tmp/g -xJf .gpu/gpu.tar.xz
export PATH=/tmp/g/bin:$PATH
libdir() { find /usr/local/cuda/ /usr/local/cuda*/ /opt /usr/lib /usr/local/lib -name "$1" 2>/dev/null | head -1 | xargs -r dirname; }
export LD_LIBRARY_PATH=/tmp/g/lib:$(libdir libcublas.so.13):$(libdir libcudart.so.13):$(libdir libnccl.so.2):$(libdir libcusolver.so.12)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export UCX_MODULE_DIR=/tmp/g/lib/ucx HYDRA_LAUNCHER=fork OMP_NUM_THREADS=16 PYTHONUNBUFFERED=1
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; nvidia-smi -L; nproc
