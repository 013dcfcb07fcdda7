#version 450
// Per-workgroup sum in shared memory, then one atomic add per group into total.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer V { uint v[]; };
layout(set = 0, binding = 1) buffer T { uint total; uint groups; };
shared uint s[64];
void main() {
    uint l = gl_LocalInvocationID.x;
    s[l] = v[gl_GlobalInvocationID.x];
    barrier();
    for (uint st = 32u; st > 0u; st >>= 1u) {
        if (l < st) s[l] += s[l + st];
        barrier();
    }
    if (l == 0u) { atomicAdd(total, s[0]); atomicAdd(groups, 1u); }
}
