//! VK_KHR_buffer_device_address through the loader with validation: GLSL
//! `GL_EXT_buffer_reference` shaders reading and writing memory through 64-bit pointers (A64
//! messages on Gen9) — pointers in push constants and in memory (a linked list), pointer
//! arithmetic through `uint64_t` casts, 8-, 16-, 32- and 64-bit loads and stores, vectors,
//! 32-bit atomics — checked against a CPU model and against lavapipe (the same shader, run in
//! a child process on each driver, must give the same words). Also VK_KHR_shader_atomic_int64:
//! every 64-bit atomic on a storage buffer and through a pointer (both A64 atomics on Gen9).

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::Harness;

const N: usize = 64;

/// `dst` (a storage buffer at binding 0) gets what the pointers in the push constants reach.
const SHADER: &str = "#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint w[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vecs { uvec4 v[]; };
layout(buffer_reference) buffer Node;
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Node {
    Node next;
    uint value;
};
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Longs { uint64_t q[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Shorts { uint16_t s[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer Bytes { uint8_t b[]; };
layout(push_constant) uniform P {
    Words src;
    Node list;
    Longs longs;
    Shorts shorts;
    Bytes bytes;
    Vecs vecs;
    Words counter;
} p;
layout(set = 0, binding = 0) buffer Dst { uint d[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    // Pointer arithmetic through uint64_t: element i of src.
    Words at = Words(uint64_t(p.src) + 4ul * i);
    d[i] = at.w[0] * 3u + p.src.w[(i + 1u) % 64u];
    // A linked list in memory: node pointers loaded from nodes.
    Node n = p.list;
    uint sum = 0u;
    for (uint k = 0u; k < i % 5u; k++) {
        sum += n.value;
        n = n.next;
    }
    d[64u + i] = sum * 100u + n.value;
    // 64-bit loads and stores.
    p.longs.q[64u + i] = p.longs.q[i] * 3ul + uint64_t(i) + (1ul << 40);
    // 16- and 8-bit loads and stores.
    p.shorts.s[64u + i] = uint16_t(p.shorts.s[i] + uint16_t(i));
    p.bytes.b[64u + i] = uint8_t(p.bytes.b[63u - i] ^ uint8_t(i));
    // A vector through a pointer.
    uvec4 v = p.vecs.v[i];
    p.vecs.v[64u + i] = v.wzyx + uvec4(i);
    // 32-bit atomics on global memory.
    uint old = atomicAdd(p.counter.w[i % 4u], i + 1u);
    atomicMax(p.counter.w[4u + i % 2u], old);
}";

struct Mem {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    ptr: *mut u8,
    address: u64,
}

/// A host-visible buffer of `size` bytes in memory allocated with DEVICE_ADDRESS.
fn addressable(c: &Ctx, size: u64) -> Mem {
    let mem_type =
        c.h.memory_type(
            c.pd,
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        )
        .expect("host-visible memory");
    // SAFETY: valid create infos on a live device; destroyed by `free`.
    unsafe {
        let buffer = c
            .dev
            .create_buffer(
                &vk::BufferCreateInfo::default().size(size).usage(
                    vk::BufferUsageFlags::STORAGE_BUFFER
                        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
                ),
                None,
            )
            .unwrap();
        let req = c.dev.get_buffer_memory_requirements(buffer);
        let mut flags =
            vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let memory = c
            .dev
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(mem_type)
                    .push_next(&mut flags),
                None,
            )
            .unwrap();
        c.dev.bind_buffer_memory(buffer, memory, 0).unwrap();
        let ptr = c
            .dev
            .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            .unwrap()
            .cast();
        let bda = ash::khr::buffer_device_address::Device::new(&c.h.instance, &c.dev);
        let address =
            bda.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer));
        Mem {
            buffer,
            memory,
            ptr,
            address,
        }
    }
}

impl Mem {
    fn write(&self, off: usize, data: &[u8]) {
        // SAFETY: the mapping covers the buffer; callers stay inside it.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(off), data.len()) };
    }
    fn read(&self, off: usize, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(off), v.as_mut_ptr(), n) };
        v
    }
    fn free(self, c: &Ctx) {
        // SAFETY: the device is idle; the objects were made by `addressable`.
        unsafe {
            c.dev.unmap_memory(self.memory);
            c.dev.destroy_buffer(self.buffer, None);
            c.dev.free_memory(self.memory, None);
        }
    }
}

/// A device with VK_KHR_buffer_device_address and the 8/16/64-bit features the shader uses.
fn ctx() -> Ctx {
    let h = Harness::with_instance_extensions(
        true,
        &[
            c"VK_KHR_get_physical_device_properties2",
            c"VK_KHR_device_group_creation",
        ],
    );
    let exts = [
        c"VK_KHR_buffer_device_address".as_ptr(),
        // VkMemoryAllocateFlagsInfo belongs to VK_KHR_device_group on a 1.0 instance.
        c"VK_KHR_device_group".as_ptr(),
        c"VK_KHR_16bit_storage".as_ptr(),
        c"VK_KHR_8bit_storage".as_ptr(),
        c"VK_KHR_shader_float16_int8".as_ptr(),
        c"VK_KHR_storage_buffer_storage_class".as_ptr(),
        c"VK_KHR_shader_atomic_int64".as_ptr(),
    ];
    let core = vk::PhysicalDeviceFeatures::default()
        .shader_int64(true)
        .shader_int16(true);
    let mut bda =
        vk::PhysicalDeviceBufferDeviceAddressFeatures::default().buffer_device_address(true);
    let mut s16 =
        vk::PhysicalDevice16BitStorageFeatures::default().storage_buffer16_bit_access(true);
    let mut s8 = vk::PhysicalDevice8BitStorageFeatures::default().storage_buffer8_bit_access(true);
    let mut i8 = vk::PhysicalDeviceShaderFloat16Int8Features::default().shader_int8(true);
    let mut a64 =
        vk::PhysicalDeviceShaderAtomicInt64Features::default().shader_buffer_int64_atomics(true);
    let info = vk::DeviceCreateInfo::default()
        .enabled_extension_names(&exts)
        .enabled_features(&core)
        .push_next(&mut bda)
        .push_next(&mut s16)
        .push_next(&mut s8)
        .push_next(&mut i8)
        .push_next(&mut a64);
    Ctx::with_create_info(h, info)
}

fn src_words() -> Vec<u32> {
    random_u32s(5, N).iter().map(|x| x % 100_000).collect()
}
fn longs() -> Vec<u64> {
    random_u32s(9, 2 * N)
        .chunks(2)
        .map(|c| u64::from(c[0]) | (u64::from(c[1] % 1000) << 32))
        .collect()
}
fn shorts() -> Vec<u16> {
    random_u32s(13, N).iter().map(|x| *x as u16).collect()
}
fn bytes() -> Vec<u8> {
    random_u32s(17, N).iter().map(|x| *x as u8).collect()
}
fn vecs() -> Vec<u32> {
    random_u32s(21, 4 * N)
}
/// Node k: (next = node (k + 1) % 8, value = 10 + k); the list starts at node 0.
const NODES: usize = 8;

fn le<T: Copy, const K: usize>(v: &[T], f: impl Fn(T) -> [u8; K]) -> Vec<u8> {
    v.iter().flat_map(|x| f(*x)).collect()
}

/// Runs the shader on the driver the loader picks in this process.
fn run() -> Results {
    let mut c = ctx();
    let k = c.kernel(&spirv("buffer_address", Some(SHADER)), 1, 7 * 8);
    let dst = zeroed(&mut c, 2 * N);
    c.bind(k, &[dst]);
    let src = addressable(&c, 4 * N as u64);
    src.write(0, &le(&src_words(), u32::to_le_bytes));
    let list = addressable(&c, 16 * NODES as u64);
    for n in 0..NODES {
        let next = list.address + 16 * ((n + 1) % NODES) as u64;
        list.write(16 * n, &next.to_le_bytes());
        list.write(16 * n + 8, &(10 + n as u32).to_le_bytes());
    }
    let lg = addressable(&c, 16 * N as u64);
    lg.write(0, &le(&longs(), u64::to_le_bytes));
    let sh = addressable(&c, 4 * N as u64);
    sh.write(0, &le(&shorts(), u16::to_le_bytes));
    let by = addressable(&c, 2 * N as u64);
    by.write(0, &bytes());
    let ve = addressable(&c, 32 * N as u64);
    ve.write(0, &le(&vecs(), u32::to_le_bytes));
    let ctr = addressable(&c, 32);
    ctr.write(0, &[0u8; 32]);
    let mut pc = Vec::new();
    for m in [&src, &list, &lg, &sh, &by, &ve, &ctr] {
        pc.extend(m.address.to_le_bytes());
    }
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        push(&c, cb, k, &pc);
        dispatch(&c, cb, 1, 1);
    })
    .unwrap();
    let words = |b: Vec<u8>| -> Vec<u32> {
        b.chunks(4)
            .map(|x| u32::from_le_bytes(x.try_into().unwrap()))
            .collect()
    };
    let mut r = Results::new();
    r.insert("dst".into(), c.buf(dst).read_u32s(2 * N));
    r.insert("longs".into(), words(lg.read(8 * N, 8 * N)));
    r.insert("shorts".into(), words(sh.read(2 * N, 2 * N)));
    r.insert("bytes".into(), words(by.read(N, N)));
    r.insert("vecs".into(), words(ve.read(16 * N, 16 * N)));
    // The counters' final values (the returned old values depend on the order).
    r.insert("counter_sums".into(), words(ctr.read(0, 16)));
    for m in [src, list, lg, sh, by, ve, ctr] {
        m.free(&c);
    }
    c.finish();
    r
}

/// The CPU model of the shader.
fn reference() -> Results {
    let mut r = Results::new();
    let s = src_words();
    let mut d = vec![0u32; 2 * N];
    for i in 0..N {
        d[i] = s[i].wrapping_mul(3).wrapping_add(s[(i + 1) % 64]);
        let mut node = 0usize;
        let mut sum = 0u32;
        for _ in 0..i % 5 {
            sum += 10 + node as u32;
            node = (node + 1) % NODES;
        }
        d[64 + i] = sum * 100 + 10 + node as u32;
    }
    r.insert("dst".into(), d);
    let l = longs();
    let lo: Vec<u64> = (0..N)
        .map(|i| {
            l[i].wrapping_mul(3)
                .wrapping_add(i as u64)
                .wrapping_add(1 << 40)
        })
        .collect();
    r.insert(
        "longs".into(),
        lo.iter()
            .flat_map(|q| [*q as u32, (*q >> 32) as u32])
            .collect(),
    );
    let sh = shorts();
    let so: Vec<u16> = (0..N).map(|i| sh[i].wrapping_add(i as u16)).collect();
    r.insert(
        "shorts".into(),
        so.chunks(2)
            .map(|c| u32::from(c[0]) | (u32::from(c[1]) << 16))
            .collect(),
    );
    let by = bytes();
    let bo: Vec<u8> = (0..N).map(|i| by[63 - i] ^ i as u8).collect();
    r.insert(
        "bytes".into(),
        bo.chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    );
    let v = vecs();
    let mut vo = Vec::new();
    for i in 0..N {
        let x = &v[4 * i..4 * i + 4];
        for k in 0..4 {
            vo.push(x[3 - k].wrapping_add(i as u32));
        }
    }
    r.insert("vecs".into(), vo);
    let mut ctr = [0u32; 4];
    for i in 0..N {
        ctr[i % 4] += i as u32 + 1;
    }
    r.insert("counter_sums".into(), ctr.to_vec());
    r
}

#[test]
#[ignore = "run by buffer_address_matches_cpu_and_lavapipe in a child process"]
fn child_runs_buffer_address() {
    if !is_child() {
        return;
    }
    print_results(&run());
}

/// Ferrite (simulated GPU) against the CPU model, and lavapipe against Ferrite.
#[test]
fn buffer_address_matches_cpu_and_lavapipe() {
    check_ferrite_and_lavapipe_against("child_runs_buffer_address", &reference());
}

/// Every 64-bit atomic on a storage buffer, and an add through a pointer. Commutative
/// operations meet in one qword each (their final value does not depend on the order);
/// exchange and compare-exchange work on one qword per invocation, so their returned old
/// values are deterministic too.
const ATOMIC64: &str = "#version 450
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer A {
    uint64_t add_, umin_, umax_, and_, or_, xor_;
    int64_t smin_, smax_;
    uint64_t slot[32];
    uint64_t cas[32];
    uint64_t old[64];
} a;
layout(buffer_reference, std430, buffer_reference_align = 8) buffer G { uint64_t v[]; };
layout(push_constant) uniform P { G g; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint64_t x = (uint64_t(i) * 0x9E3779B97F4A7C15ul) ^ (uint64_t(i) << 40);
    atomicAdd(a.add_, x);
    atomicMin(a.umin_, x);
    atomicMax(a.umax_, x);
    atomicAnd(a.and_, ~(1ul << (i + 20u)));
    atomicOr(a.or_, 1ul << (i + 16u));
    atomicXor(a.xor_, x);
    atomicMin(a.smin_, int64_t(x));
    atomicMax(a.smax_, int64_t(x));
    a.old[i] = atomicExchange(a.slot[i], x);
    a.old[32u + i] = atomicCompSwap(a.cas[i], (i % 2u == 0u) ? uint64_t(i) : 7ul, x);
    atomicAdd(p.g.v[i % 4u], uint64_t(i) << 33);
}";

const WORDS64: usize = 8 + 32 + 32 + 64;

fn atomic64_initial() -> Vec<u64> {
    let mut v = vec![
        5,
        u64::MAX,
        0,
        u64::MAX,
        0,
        0x1234_5678_9abc_def0,
        i64::MAX as u64,
        i64::MIN as u64,
    ];
    v.extend((0..32).map(|i| 1000 + i));
    v.extend(0..32);
    v.extend(std::iter::repeat_n(0, 64));
    v
}

fn qwords_to_words(q: &[u64]) -> Vec<u32> {
    q.iter()
        .flat_map(|x| [*x as u32, (*x >> 32) as u32])
        .collect()
}

fn run_atomic64() -> Results {
    let mut c = ctx();
    let k = c.kernel(&spirv("atomic64", Some(ATOMIC64)), 1, 8);
    let a = c.buffer(8 * WORDS64 as u64);
    c.buf(a).write_u32s(&qwords_to_words(&atomic64_initial()));
    c.bind(k, &[a]);
    let g = addressable(&c, 32);
    g.write(0, &[0u8; 32]);
    let pc = g.address.to_le_bytes();
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        push(&c, cb, k, &pc);
        dispatch(&c, cb, 1, 1);
    })
    .unwrap();
    let mut r = Results::new();
    r.insert("buffer".into(), c.buf(a).read_u32s(2 * WORDS64));
    let gw = g.read(0, 32);
    r.insert(
        "pointer".into(),
        gw.chunks(4)
            .map(|x| u32::from_le_bytes(x.try_into().unwrap()))
            .collect(),
    );
    g.free(&c);
    c.finish();
    r
}

fn atomic64_reference() -> Results {
    let mut m = atomic64_initial();
    let mut g = [0u64; 4];
    for i in 0..32u64 {
        let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 40);
        m[0] = m[0].wrapping_add(x);
        m[1] = m[1].min(x);
        m[2] = m[2].max(x);
        m[3] &= !(1u64 << (i + 20));
        m[4] |= 1u64 << (i + 16);
        m[5] ^= x;
        m[6] = (m[6] as i64).min(x as i64) as u64;
        m[7] = (m[7] as i64).max(x as i64) as u64;
        let s = 8 + i as usize;
        m[72 + i as usize] = m[s];
        m[s] = x;
        let cs = 40 + i as usize;
        let cmp = if i % 2 == 0 { i } else { 7 };
        m[104 + i as usize] = m[cs];
        if m[cs] == cmp {
            m[cs] = x;
        }
        g[(i % 4) as usize] = g[(i % 4) as usize].wrapping_add(i << 33);
    }
    let mut r = Results::new();
    r.insert("buffer".into(), qwords_to_words(&m));
    r.insert("pointer".into(), qwords_to_words(&g));
    r
}

#[test]
#[ignore = "run by int64_atomics_match_cpu_and_lavapipe in a child process"]
fn child_runs_atomic64() {
    if !is_child() {
        return;
    }
    print_results(&run_atomic64());
}

/// Ferrite (simulated GPU) and lavapipe against the CPU model.
#[test]
fn int64_atomics_match_cpu_and_lavapipe() {
    check_ferrite_and_lavapipe_against("child_runs_atomic64", &atomic64_reference());
}

/// A 64-bit atomic past the bound range of a storage buffer (the descriptor covers 8 of the
/// buffer's 16 qwords): A64 messages are not bounds-checked, so the shader checks, and a
/// channel outside the range neither writes nor returns anything but 0, as a surface
/// atomic outside its surface. Ferrite only: without robustBufferAccess the spec leaves the
/// access undefined, so lavapipe is no reference here.
#[test]
fn int64_atomic_outside_the_bound_range_does_nothing() {
    const SRC: &str = "#version 450
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer B { uint64_t v[]; };
layout(set = 0, binding = 1) buffer R { uint64_t ret[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    ret[i] = atomicAdd(v[i], (uint64_t(i + 1u) << 32) | 1ul);
}";
    if is_child() {
        return;
    }
    let mut c = ctx();
    let k = c.kernel(&spirv("atomic64_range", Some(SRC)), 2, 0);
    let a = c.buffer(128);
    let init: Vec<u64> = (0..16).map(|k| 1000 + k).collect();
    c.buf(a).write_u32s(&qwords_to_words(&init));
    let ret = zeroed(&mut c, 32);
    let infos = [
        [vk::DescriptorBufferInfo {
            buffer: c.buf(a).buffer,
            offset: 0,
            range: 64,
        }],
        [vk::DescriptorBufferInfo {
            buffer: c.buf(ret).buffer,
            offset: 0,
            range: vk::WHOLE_SIZE,
        }],
    ];
    let writes: Vec<_> = infos
        .iter()
        .enumerate()
        .map(|(b, info)| {
            vk::WriteDescriptorSet::default()
                .dst_set(c.k(k).set)
                .dst_binding(b as u32)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(info)
        })
        .collect();
    // SAFETY: valid writes of a live set that no pending command buffer uses.
    unsafe { c.dev.update_descriptor_sets(&writes, &[]) };
    c.run(|_, cb| {
        c.bind_kernel(cb, k);
        dispatch(&c, cb, 1, 1);
    })
    .unwrap();
    let got = c.buf(a).read_u32s(32);
    let rets = c.buf(ret).read_u32s(32);
    c.finish();
    let mut want = init.clone();
    let mut want_ret = vec![0u64; 16];
    for i in 0..8u64 {
        want_ret[i as usize] = want[i as usize];
        want[i as usize] += ((i + 1) << 32) | 1;
    }
    assert_eq!(got, qwords_to_words(&want), "buffer after the atomics");
    assert_eq!(rets, qwords_to_words(&want_ret), "returned old values");
}

/// 64-bit atomics on elements of descriptor arrays, on both paths: `a[4]` sits in the binding
/// table (its elements' addresses come from the CURBE), `t[300]` reaches past it (addresses from
/// the descriptor table, docs/descriptors.md). Group g adds to `a[g]` (a distinct qword per
/// invocation, old values returned) and to one element of `t` (two invocations per qword); the
/// last invocation of each group adds one qword past its element's 128-byte range, which does
/// nothing and returns 0. Checked against a CPU model.
#[test]
fn int64_atomics_on_descriptor_arrays() {
    const SRC: &str = "#version 450
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) buffer A { uint64_t v[]; } a[4];
layout(set = 0, binding = 1) buffer R { uint64_t ret[]; };
layout(set = 0, binding = 2) buffer T { uint64_t v[]; } t[300];
void main() {
    uint g = gl_WorkGroupID.x;
    uint j = gl_LocalInvocationID.x;
    uint e = g == 3u ? 299u : g * 125u + 7u;
    uint64_t x = (uint64_t(j + 1u) << 32) | uint64_t(g + 1u);
    ret[g * 32u + j] = atomicAdd(a[g].v[j], x);
    ret[g * 32u + 16u + j] = atomicAdd(t[e].v[j == 15u ? 16u : j & 7u], x);
}";
    if is_child() {
        return;
    }
    const ELEMS: [u32; 4] = [7, 132, 257, 299];
    let mut c = ctx();
    let code = spirv("atomic64_arrays", Some(SRC));
    let abuf = c.buffer(4 * 256);
    let tbuf = c.buffer(300 * 256);
    let ret = zeroed(&mut c, 2 * 128);
    let a_init: Vec<u64> = (0..4 * 32).map(|k| 7_000_000 + 3 * k).collect();
    let t_init: Vec<u64> = (0..300 * 32).map(|k| (k << 20) + 11).collect();
    c.buf(abuf).write_u32s(&qwords_to_words(&a_init));
    c.buf(tbuf).write_u32s(&qwords_to_words(&t_init));
    let ssbo = vk::DescriptorType::STORAGE_BUFFER;
    let bindings = [
        ferrite_tests::icd::compute_binding(0, ssbo, 4),
        ferrite_tests::icd::compute_binding(1, ssbo, 1),
        ferrite_tests::icd::compute_binding(2, ssbo, 300),
    ];
    let info = |buf: usize, i: u64| vk::DescriptorBufferInfo {
        buffer: c.buf(buf).buffer,
        offset: 256 * i,
        range: 128,
    };
    let a_infos: Vec<_> = (0..4).map(|i| info(abuf, i)).collect();
    let t_infos: Vec<_> = (0..300).map(|i| info(tbuf, i)).collect();
    let r_info = [vk::DescriptorBufferInfo {
        buffer: c.buf(ret).buffer,
        offset: 0,
        range: vk::WHOLE_SIZE,
    }];
    // SAFETY: valid create infos and writes on a live device; destroyed below.
    unsafe {
        let (set_layout, layout) = ferrite_tests::icd::compute_layout(
            &c.dev,
            &bindings,
            vk::DescriptorSetLayoutCreateFlags::empty(),
            0,
        )
        .unwrap();
        let pipeline = c.pipeline(&code, layout).expect("vkCreateComputePipelines");
        let (pool, set) =
            ferrite_tests::icd::one_set_of(&c.dev, set_layout, &[(ssbo, 305)]).unwrap();
        let writes: Vec<_> = [(0, &a_infos[..]), (1, &r_info[..]), (2, &t_infos[..])]
            .into_iter()
            .map(|(binding, infos)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(binding)
                    .descriptor_type(ssbo)
                    .buffer_info(infos)
            })
            .collect();
        c.dev.update_descriptor_sets(&writes, &[]);
        c.run(|d, cb| {
            d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            d.cmd_dispatch(cb, 4, 1, 1);
        })
        .unwrap();
        c.dev.destroy_descriptor_pool(pool, None);
        c.dev.destroy_pipeline(pipeline, None);
        c.dev.destroy_pipeline_layout(layout, None);
        c.dev.destroy_descriptor_set_layout(set_layout, None);
    }
    let got_a = c.buf(abuf).read_u32s(2 * 4 * 32);
    let got_t = c.buf(tbuf).read_u32s(2 * 300 * 32);
    let got_ret = c.buf(ret).read_u32s(2 * 128);
    c.finish();
    let (mut a, mut t, mut r) = (a_init.clone(), t_init.clone(), vec![0u64; 128]);
    for g in 0..4u64 {
        let e = u64::from(ELEMS[g as usize]);
        for j in 0..16u64 {
            let x = ((j + 1) << 32) | (g + 1);
            // a[g].v[j]: element g covers qwords 32g .. 32g + 16.
            let q = (32 * g + j) as usize;
            r[(32 * g + j) as usize] = a[q];
            a[q] += x;
            if j != 15 {
                let q = (32 * e + (j & 7)) as usize;
                t[q] += x;
            }
        }
    }
    assert_eq!(got_a, qwords_to_words(&a), "a[] after the atomics");
    assert_eq!(got_t, qwords_to_words(&t), "t[] after the atomics");
    let got_ret: Vec<u64> = got_ret
        .chunks(2)
        .map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32))
        .collect();
    for g in 0..4usize {
        assert_eq!(
            got_ret[32 * g..32 * g + 16],
            r[32 * g..32 * g + 16],
            "group {g}: a[] old values"
        );
        assert_eq!(
            got_ret[32 * g + 31],
            0,
            "group {g}: the atomic past t[]'s range returned"
        );
    }
}
