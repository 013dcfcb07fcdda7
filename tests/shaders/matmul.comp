#version 450
// C = A * B for N x N matrices (N a multiple of 8), 8x8 tiles staged in shared memory.
layout(local_size_x = 8, local_size_y = 8) in;
layout(push_constant) uniform P { uint n; } pc;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(set = 0, binding = 1) buffer B { float b[]; };
layout(set = 0, binding = 2) buffer C { float c[]; };
shared float ta[8][8];
shared float tb[8][8];
void main() {
    uint row = gl_GlobalInvocationID.y;
    uint col = gl_GlobalInvocationID.x;
    uint lx = gl_LocalInvocationID.x;
    uint ly = gl_LocalInvocationID.y;
    float acc = 0.0;
    for (uint t = 0u; t < pc.n; t += 8u) {
        ta[ly][lx] = a[row * pc.n + t + lx];
        tb[ly][lx] = b[(t + ly) * pc.n + col];
        barrier();
        for (uint k = 0u; k < 8u; k++) acc += ta[ly][k] * tb[k][lx];
        barrier();
    }
    c[row * pc.n + col] = acc;
}
