#version 450
// 16-bin histogram of the low 4 bits, with atomics; group size 50 (not a multiple of SIMD).
layout(local_size_x = 50) in;
layout(set = 0, binding = 0) buffer V { uint v[]; };
layout(set = 0, binding = 1) buffer H { uint bins[16]; };
void main() {
    atomicAdd(bins[v[gl_GlobalInvocationID.x] & 15u], 1u);
}
