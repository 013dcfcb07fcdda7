#version 450
// y = a * x + y over n elements; a and n are push constants.
layout(local_size_x = 64) in;
layout(push_constant) uniform P { float a; uint n; } pc;
layout(set = 0, binding = 0) buffer X { float x[]; };
layout(set = 0, binding = 1) buffer Y { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) y[i] = pc.a * x[i] + y[i];
}
