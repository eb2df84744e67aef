#!/usr/bin/env bash
# CMAKE_ARGS for building llama-cpp-python on this CPU, from the instruction sets it really has.
# A default build uses -march=native, which on some virtual machines enables instructions the CPU
# advertises but cannot run (AMX) and dies with "Illegal instruction" at the first model call; a
# fixed list of flags fails elsewhere (AVX-VNNI forced on crashes the AMD EPYC machines, which lack
# it; see "Installing" in ../shared/docs/MODELS.md, the shared notes beside this repository). So:
# native off, and each instruction set on only if /proc/cpuinfo lists it. Elsewhere (macOS, no
# cpuinfo) print nothing and let llama.cpp choose. qasper_rag.generate.llama_cmake_args() applies
# the same rule (tests/test_defects.py holds the two to the same output).
# Usage: scripts/llama_cmake_args.sh [CPUINFO]   (default /proc/cpuinfo)
set -u
flags=$(grep -m1 '^flags' "${1:-/proc/cpuinfo}" 2>/dev/null) || exit 0
[ -n "$flags" ] || exit 0
args="-DGGML_NATIVE=OFF"
has() { case " $flags " in *" $1 "*) return 0;; esac; return 1; }
for pair in avx:AVX avx2:AVX2 fma:FMA f16c:F16C bmi2:BMI2 avx512f:AVX512 avx512vbmi:AVX512_VBMI \
            avx512_vnni:AVX512_VNNI avx_vnni:AVX_VNNI; do
  has "${pair%%:*}" && args="$args -DGGML_${pair##*:}=ON"
done
echo "$args"
