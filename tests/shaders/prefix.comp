#version 450
// Inclusive prefix sum of 256 elements in one workgroup (Hillis-Steele in shared memory).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer V { uint v[]; };
shared uint s[256];
void main() {
    uint l = gl_LocalInvocationID.x;
    s[l] = v[l];
    barrier();
    for (uint off = 1u; off < 256u; off <<= 1u) {
        uint add = l >= off ? s[l - off] : 0u;
        barrier();
        s[l] += add;
        barrier();
    }
    v[l] = s[l];
}
