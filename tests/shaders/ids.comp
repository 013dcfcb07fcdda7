#version 450
// Writes gl_NumWorkGroups and gl_WorkGroupID per group (indirect and base dispatch checks).
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) buffer O { uint o[]; };
void main() {
    if (gl_LocalInvocationIndex == 0u) {
        uint g = gl_WorkGroupID.x + 16u * gl_WorkGroupID.y;
        o[4u * g + 0u] = gl_NumWorkGroups.x;
        o[4u * g + 1u] = gl_NumWorkGroups.y;
        o[4u * g + 2u] = gl_WorkGroupID.x;
        o[4u * g + 3u] = 1u + gl_WorkGroupID.y;
    }
}
