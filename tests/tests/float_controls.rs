//! VK_KHR_shader_float_controls through the loader: the extension and
//! VkPhysicalDeviceFloatControlsProperties on the simulated Skylake, the core 1.1/1.2
//! structures answered when chained, and shaders with float execution modes run with the
//! validation layer silent. The same shaders run on lavapipe; a mode's results are compared
//! with lavapipe's only when both drivers claim it, and always with the CPU reference.
//!
//! Each driver runs in a child process (the loader reads VK_DRIVER_FILES once per process):
//! this binary again, on its ignored `child_reports_float_controls` test.

mod compute_common;

use ash::vk;
use compute_common::*;
use ferrite_tests::icd::{loader_env, Harness};

/// The float-controls properties, in the order of the struct, as 0/1 (the two
/// independence values as their raw numbers).
fn props_list(p: &vk::PhysicalDeviceFloatControlsProperties<'_>) -> Vec<u32> {
    vec![
        p.denorm_behavior_independence.as_raw() as u32,
        p.rounding_mode_independence.as_raw() as u32,
        p.shader_signed_zero_inf_nan_preserve_float16,
        p.shader_signed_zero_inf_nan_preserve_float32,
        p.shader_signed_zero_inf_nan_preserve_float64,
        p.shader_denorm_preserve_float16,
        p.shader_denorm_preserve_float32,
        p.shader_denorm_preserve_float64,
        p.shader_denorm_flush_to_zero_float16,
        p.shader_denorm_flush_to_zero_float32,
        p.shader_denorm_flush_to_zero_float64,
        p.shader_rounding_mode_rte_float16,
        p.shader_rounding_mode_rte_float32,
        p.shader_rounding_mode_rte_float64,
        p.shader_rounding_mode_rtz_float16,
        p.shader_rounding_mode_rtz_float32,
        p.shader_rounding_mode_rtz_float64,
    ]
}

// Indices into `props_list`.
const PRESERVE32: usize = 6;
const FLUSH32: usize = 9;
const RTE32: usize = 12;
const RTZ32: usize = 15;

/// (name, the property that must hold, GLSL execution-mode line).
const MODES: &[(&str, usize, &str)] = &[
    (
        "rte32",
        RTE32,
        "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4467], 4462, 32);",
    ),
    (
        "rtz32",
        RTZ32,
        "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4468], 4463, 32);",
    ),
    (
        "preserve32",
        PRESERVE32,
        "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4464], 4459, 32);",
    ),
    (
        "flush32",
        FLUSH32,
        "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4465], 4460, 32);",
    ),
];

fn shader(mode_line: &str) -> String {
    format!(
        "#version 450
#extension GL_EXT_spirv_intrinsics : require
{mode_line}
layout(local_size_x = 64) in;
layout(set=0, binding=0) buffer I {{ float a[]; }};
layout(set=0, binding=1) buffer O {{ float o[]; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    float x = a[2u * i], y = a[2u * i + 1u];
    o[2u * i] = x + y;
    o[2u * i + 1u] = x * y;
}}"
    )
}

const N: usize = 64;

/// Pairs: normal inputs whose sum and product round differently toward zero and to
/// nearest, and pairs with denormal results (normal inputs).
fn inputs() -> Vec<f32> {
    let tiny = f32::MIN_POSITIVE;
    let mut v = Vec::new();
    let r = random_u32s(99, 2 * N);
    for i in 0..N {
        if i % 8 == 0 {
            v.extend([1.5 * tiny, -tiny]);
        } else if i % 8 == 1 {
            v.extend([2f32.powi(-70), -(2f32.powi(-71) * 1.5)]);
        } else {
            let f = |w: u32| f32::from_bits(0x3F80_0000 | (w & 0x807F_FFFF)) * 3.0;
            v.extend([f(r[2 * i]), f(r[2 * i + 1])]);
        }
    }
    v
}

/// The CPU result of a mode (the exact sums and products fit an f64).
fn reference(mode: &str) -> Vec<u32> {
    let a = inputs();
    let (rtz, keep) = match mode {
        "rtz32" => (true, false),
        "preserve32" => (false, true),
        _ => (false, false),
    };
    let round = |x: f64| {
        let mut r = x as f32;
        if rtz && (r as f64).abs() > x.abs() {
            r = f32::from_bits(r.to_bits() - 1);
        }
        if !keep && r.is_subnormal() {
            r = 0f32.copysign(r);
        }
        r.to_bits()
    };
    a.chunks(2)
        .flat_map(|p| {
            let (x, y) = (f64::from(p[0]), f64::from(p[1]));
            [round(x + y), round(x * y)]
        })
        .collect()
}

/// What one driver reports and computes: "props" and "ext" entries, then one result per
/// mode it claims.
fn run_driver() -> Results {
    let mut r = Results::new();
    let h =
        Harness::with_instance_extensions(true, &[ash::khr::get_physical_device_properties2::NAME]);
    let pd = h.physical_devices()[0];
    let gpdp2 = ash::khr::get_physical_device_properties2::Instance::new(&h.entry, &h.instance);
    let mut fc = vk::PhysicalDeviceFloatControlsProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut fc);
    // SAFETY: a live physical device and a valid output chain.
    unsafe { gpdp2.get_physical_device_properties2(pd, &mut p2) };
    let props = props_list(&fc);
    r.insert("props".into(), props.clone());
    // SAFETY: live physical device.
    let exts = unsafe { h.instance.enumerate_device_extension_properties(pd) }.unwrap();
    let has = exts
        .iter()
        .any(|e| e.extension_name_as_c_str().ok() == Some(ash::khr::shader_float_controls::NAME));
    r.insert("ext".into(), vec![u32::from(has)]);
    if !has {
        return r;
    }
    let prio = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(0)
        .queue_priorities(&prio)];
    let names = [ash::khr::shader_float_controls::NAME.as_ptr()];
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&names);
    // SAFETY: valid create info for a live physical device.
    let dev = unsafe { ferrite_tests::icd::create_device(&h.instance, pd, &info) }
        .expect("vkCreateDevice");
    let mut c = Ctx::with_device(h, pd, dev);
    let a = inputs();
    for (name, prop, line) in MODES {
        if props[*prop] == 0 {
            continue;
        }
        let k = c.kernel(&spirv(name, Some(&shader(line))), 2, 0);
        let (i, o) = (c.buffer(a.len() as u64 * 4), c.buffer(a.len() as u64 * 4));
        c.buf(i).write_f32s(&a);
        c.bind(k, &[i, o]);
        c.run(|d, cb| {
            c.bind_kernel(cb, k);
            // SAFETY: recording into a live command buffer.
            unsafe { d.cmd_dispatch(cb, 1, 1, 1) };
        })
        .unwrap();
        r.insert((*name).into(), c.buf(o).read_u32s(a.len()));
    }
    c.finish();
    r
}

#[test]
#[ignore = "runs only as the child of float_controls_agree_with_cpu_and_lavapipe"]
fn child_reports_float_controls() {
    if !is_child() {
        return;
    }
    print_results(&run_driver());
}

#[test]
fn float_controls_agree_with_cpu_and_lavapipe() {
    let ferrite = run_child("child_reports_float_controls", &loader_env());
    assert_eq!(
        ferrite["ext"],
        vec![1],
        "VK_KHR_shader_float_controls offered"
    );
    // Skylake with DF hardware: one rounding field for all widths (NONE = 2), one denormal
    // bit per width (ALL = 1); every mode of every width.
    let want = vec![1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1];
    assert_eq!(ferrite["props"], want);
    for (name, _, _) in MODES {
        assert_eq!(
            ferrite.get(*name),
            Some(&reference(name)),
            "Ferrite vs CPU: {name}"
        );
    }
    let lavapipe = run_child("child_reports_float_controls", &lavapipe_env());
    // Without a denormal mode a driver may flush or keep denormal results: those modes are
    // compared with denormals taken as zeros.
    let canon = |name: &str, v: &[u32]| -> Vec<u32> {
        let any_denorm = !name.starts_with("preserve") && !name.starts_with("flush");
        v.iter()
            .map(|&w| {
                if any_denorm && f32::from_bits(w).is_subnormal() {
                    w & 0x8000_0000
                } else {
                    w
                }
            })
            .collect()
    };
    let mut compared = 0;
    for (name, _, _) in MODES {
        if let Some(l) = lavapipe.get(*name) {
            let l = canon(name, l);
            assert_eq!(l, canon(name, &reference(name)), "lavapipe vs CPU: {name}");
            assert_eq!(
                canon(name, &ferrite[*name]),
                l,
                "Ferrite vs lavapipe: {name}"
            );
            compared += 1;
        }
    }
    eprintln!(
        "lavapipe properties {:?}; {compared} modes compared",
        lavapipe["props"]
    );
}

/// The core 1.1/1.2 structures are answered from the same tables when an application chains
/// them (apiVersion is 1.0, so without the validation layer, which would call them invalid).
#[test]
fn vulkan11_and_12_structures_report_what_works() {
    let h = Harness::with_instance_extensions(
        false,
        &[ash::khr::get_physical_device_properties2::NAME],
    );
    let pd = h.physical_device();
    let gpdp2 = ash::khr::get_physical_device_properties2::Instance::new(&h.entry, &h.instance);
    let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut f12 = vk::PhysicalDeviceVulkan12Features {
        // Members Ferrite does not support must come back false.
        draw_indirect_count: vk::TRUE,
        ..Default::default()
    };
    let mut f2 = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut f11)
        .push_next(&mut f12);
    // SAFETY: live physical device, valid chain.
    unsafe { gpdp2.get_physical_device_features2(pd, &mut f2) };
    assert_eq!(f2.features.shader_float64, vk::TRUE);
    assert_eq!(
        (
            f11.storage_buffer16_bit_access,
            f11.uniform_and_storage_buffer16_bit_access
        ),
        (vk::TRUE, vk::TRUE)
    );
    assert_eq!(
        (f11.storage_push_constant16, f11.storage_input_output16),
        (vk::TRUE, vk::FALSE)
    );
    assert_eq!(f11.multiview, vk::FALSE);
    assert_eq!((f12.shader_float16, f12.shader_int8), (vk::TRUE, vk::TRUE));
    assert_eq!(f12.storage_buffer8_bit_access, vk::TRUE);
    assert_eq!(f12.timeline_semaphore, vk::TRUE);
    assert_eq!(f12.draw_indirect_count, vk::FALSE);

    let mut p11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut p12 = vk::PhysicalDeviceVulkan12Properties::default();
    let mut fc = vk::PhysicalDeviceFloatControlsProperties::default();
    let cache_uuid = {
        let mut p2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut p11)
            .push_next(&mut p12)
            .push_next(&mut fc);
        // SAFETY: as above.
        unsafe { gpdp2.get_physical_device_properties2(pd, &mut p2) };
        p2.properties.pipeline_cache_uuid
    };
    assert_eq!(p12.driver_name_as_c_str().unwrap(), c"Ferrite");
    assert_eq!(p12.max_timeline_semaphore_value_difference, u64::MAX);
    assert_eq!(
        p12.rounding_mode_independence,
        fc.rounding_mode_independence
    );
    assert_eq!(p12.shader_rounding_mode_rtz_float32, vk::TRUE);
    assert_eq!(p12.shader_rounding_mode_rtz_float64, vk::TRUE);
    assert_eq!(
        p12.shader_denorm_preserve_float16,
        fc.shader_denorm_preserve_float16
    );
    assert_eq!(p11.device_uuid, cache_uuid);
    assert!(p11.max_memory_allocation_size > 0);
    // The 1.1 structures that Vulkan11Properties gathers answer with the same values (the ID
    // structure used to come back untouched: all-zero UUIDs in vulkaninfo).
    let mut id = vk::PhysicalDeviceIDProperties::default();
    let mut mv = vk::PhysicalDeviceMultiviewProperties {
        max_multiview_view_count: 77,
        ..Default::default()
    };
    let mut pc = vk::PhysicalDevicePointClippingProperties::default();
    let mut pm = vk::PhysicalDeviceProtectedMemoryProperties {
        protected_no_fault: 7,
        ..Default::default()
    };
    {
        let mut p2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut id)
            .push_next(&mut mv)
            .push_next(&mut pc)
            .push_next(&mut pm);
        // SAFETY: as above.
        unsafe { gpdp2.get_physical_device_properties2(pd, &mut p2) };
    }
    assert_eq!(
        (id.device_uuid, id.driver_uuid),
        (p11.device_uuid, p11.driver_uuid)
    );
    assert_ne!(id.driver_uuid, [0; vk::UUID_SIZE]);
    assert_eq!(
        (id.device_luid_valid, id.device_node_mask),
        (p11.device_luid_valid, p11.device_node_mask)
    );
    assert_eq!(
        (mv.max_multiview_view_count, mv.max_multiview_instance_index),
        (
            p11.max_multiview_view_count,
            p11.max_multiview_instance_index
        )
    );
    assert_eq!(pc.point_clipping_behavior, p11.point_clipping_behavior);
    assert_eq!(pm.protected_no_fault, p11.protected_no_fault);
    h.assert_clean();
}
