// One VkFFT transform on the device the loader picks: vkfft_check PREC TYPE NX [NY [NZ]] IN OUT
//   PREC: h (half storage), s (single), d (double); TYPE: c2c or r2c (forward, in place).
// Reads the input from IN (complex: interleaved re/im; r2c: real rows padded to 2*(NX/2+1)),
// in the precision's storage type, and writes the buffer after the transform to OUT.
// scripts/apps compares it with numpy.fft. Prints "time_ms=<t>" (plan + one transform).
// Exit status: 0 done, 2 usage, 3 Vulkan set-up error, 4 VkFFT error (its code is printed).
#include <vulkan/vulkan.h>
#include <vkFFT.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x, code)                                                   \
    do {                                                                 \
        VkResult r_ = (x);                                               \
        if (r_ != VK_SUCCESS) {                                          \
            fprintf(stderr, "vkfft_check: %s failed: %d\n", #x, (int)r_); \
            return code;                                                 \
        }                                                                \
    } while (0)

static uint32_t find_memory(VkPhysicalDevice pd, uint32_t bits, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
}

int main(int argc, char** argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: vkfft_check h|s|d c2c|r2c NX [NY [NZ]] IN OUT\n");
        return 2;
    }
    char prec = argv[1][0];
    bool r2c = strcmp(argv[2], "r2c") == 0;
    int ndims = argc - 5;
    uint64_t n[3] = {1, 1, 1};
    for (int i = 0; i < ndims; i++) n[i] = strtoull(argv[3 + i], 0, 10);
    const char* in_path = argv[argc - 2];
    const char* out_path = argv[argc - 1];
    size_t scalar = prec == 'h' ? 2 : prec == 's' ? 4 : 8;
    uint64_t rowc = r2c ? n[0] / 2 + 1 : n[0];
    uint64_t size = rowc * n[1] * n[2] * 2 * scalar;

    VkApplicationInfo ai = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    // VkFFT compiles its half-precision kernels for SPIR-V 1.3, which an application may only
    // hand to a Vulkan 1.1 device, and only when it asked for 1.1 itself.
    ai.apiVersion = prec == 'h' ? VK_API_VERSION_1_1 : VK_API_VERSION_1_0;
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &ai;
    const char* layer = "VK_LAYER_KHRONOS_validation";
    // binary16 storage on a Vulkan 1.0 device: VK_KHR_16bit_storage and what it requires.
    const char* iext = "VK_KHR_get_physical_device_properties2";
    if (prec == 'h') {
        ici.enabledExtensionCount = 1;
        ici.ppEnabledExtensionNames = &iext;
    }
    if (getenv("VKFFT_CHECK_VALIDATION")) {
        ici.enabledLayerCount = 1;
        ici.ppEnabledLayerNames = &layer;
    }
    VkInstance inst;
    CHECK(vkCreateInstance(&ici, 0, &inst), 3);
    uint32_t count = 1;
    VkPhysicalDevice pd;
    VkResult er = vkEnumeratePhysicalDevices(inst, &count, &pd);
    if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || count == 0) {
        fprintf(stderr, "vkfft_check: no Vulkan device\n");
        return 3;
    }
    if (prec == 'h') {
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(pd, &props);
        if (props.apiVersion < VK_API_VERSION_1_1) {
            fprintf(stderr, "vkfft_check: VkFFT's fp16 kernels are SPIR-V 1.3, which needs a Vulkan 1.1 device; this one reports %u.%u\n",
                    VK_API_VERSION_MAJOR(props.apiVersion), VK_API_VERSION_MINOR(props.apiVersion));
            return 4;
        }
    }
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, 0);
    std::vector<VkQueueFamilyProperties> qf(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf.data());
    uint32_t family = UINT32_MAX;
    for (uint32_t i = 0; i < nq; i++)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) { family = i; break; }
    if (family == UINT32_MAX) return 3;

    VkPhysicalDeviceFeatures have;
    vkGetPhysicalDeviceFeatures(pd, &have);
    VkPhysicalDeviceFeatures feats = {};
    feats.shaderFloat64 = prec == 'd' ? have.shaderFloat64 : VK_FALSE;
    VkPhysicalDevice16BitStorageFeatures s16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    s16.storageBuffer16BitAccess = prec == 'h';
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = prec == 'h' ? &s16 : 0;
    const char* ext16[2] = {"VK_KHR_16bit_storage", "VK_KHR_storage_buffer_storage_class"};
    if (prec == 'h') {
        dci.enabledExtensionCount = 2;
        dci.ppEnabledExtensionNames = ext16;
    }
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.pEnabledFeatures = &feats;
    VkDevice dev;
    CHECK(vkCreateDevice(pd, &dci, 0, &dev), 3);
    VkQueue queue;
    vkGetDeviceQueue(dev, family, 0, &queue);

    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer buf;
    CHECK(vkCreateBuffer(dev, &bci, 0, &buf), 3);
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(dev, buf, &mr);
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = mr.size;
    mai.memoryTypeIndex = find_memory(pd, mr.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (mai.memoryTypeIndex == UINT32_MAX) return 3;
    VkDeviceMemory mem;
    CHECK(vkAllocateMemory(dev, &mai, 0, &mem), 3);
    CHECK(vkBindBufferMemory(dev, buf, mem, 0), 3);
    void* map;
    CHECK(vkMapMemory(dev, mem, 0, size, 0, &map), 3);
    FILE* f = fopen(in_path, "rb");
    if (!f || fread(map, 1, size, f) != size) {
        fprintf(stderr, "vkfft_check: cannot read %llu bytes from %s\n", (unsigned long long)size, in_path);
        return 2;
    }
    fclose(f);

    VkCommandPoolCreateInfo cpci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpci.queueFamilyIndex = family;
    cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    VkCommandPool pool;
    CHECK(vkCreateCommandPool(dev, &cpci, 0, &pool), 3);
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(dev, &fci, 0, &fence), 3);

    auto t0 = std::chrono::steady_clock::now();
    VkFFTConfiguration cfg = {};
    VkFFTApplication app = {};
    cfg.FFTdim = ndims;
    for (int i = 0; i < 3; i++) cfg.size[i] = n[i];
    cfg.physicalDevice = &pd;
    cfg.device = &dev;
    cfg.queue = &queue;
    cfg.commandPool = &pool;
    cfg.fence = &fence;
    cfg.bufferSize = &size;
    // The buffer is handed over at launch time, as VkFFT's own samples do: given here at
    // plan time, Bluestein (prime) sizes come out zero even on lavapipe.
    cfg.halfPrecision = prec == 'h';
    cfg.doublePrecision = prec == 'd';
    cfg.performR2C = r2c;
    VkFFTResult res = initializeVkFFT(&app, cfg);
    if (res != VKFFT_SUCCESS) {
        fprintf(stderr, "vkfft_check: initializeVkFFT: VkFFT error %d\n", (int)res);
        return 4;
    }

    VkCommandBufferAllocateInfo cbai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cbai.commandPool = pool;
    cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbai.commandBufferCount = 1;
    VkCommandBuffer cmd;
    CHECK(vkAllocateCommandBuffers(dev, &cbai, &cmd), 3);
    VkCommandBufferBeginInfo cbbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(cmd, &cbbi), 3);
    VkFFTLaunchParams lp = {};
    lp.commandBuffer = &cmd;
    lp.buffer = &buf;
    res = VkFFTAppend(&app, -1, &lp);
    if (res != VKFFT_SUCCESS) {
        fprintf(stderr, "vkfft_check: VkFFTAppend: VkFFT error %d\n", (int)res);
        return 4;
    }
    CHECK(vkEndCommandBuffer(cmd), 3);
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    CHECK(vkQueueSubmit(queue, 1, &si, fence), 3);
    CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, 600ull * 1000 * 1000 * 1000), 3);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    f = fopen(out_path, "wb");
    if (!f || fwrite(map, 1, size, f) != size) return 2;
    fclose(f);
    printf("time_ms=%.3f\n", ms);

    deleteVkFFT(&app);
    vkDestroyFence(dev, fence, 0);
    vkDestroyCommandPool(dev, pool, 0);
    vkUnmapMemory(dev, mem);
    vkDestroyBuffer(dev, buf, 0);
    vkFreeMemory(dev, mem, 0);
    vkDestroyDevice(dev, 0);
    vkDestroyInstance(inst, 0);
    return 0;
}
