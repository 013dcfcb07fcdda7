#version 450
// Never terminates: the GPU watchdog must reset it (VK_ERROR_DEVICE_LOST).
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer O { uint o[]; };
void main() {
    uint i = 0u;
    while (o[0] == 0u) { i++; }
    o[1] = i;
}
