//! Ferrite's demo: a plain Vulkan program run through the system loader.
//!
//! It prints the devices the loader finds, then on the first one creates a device, allocates
//! host-visible memory, binds a buffer to it, writes a pattern through a mapping, reads it back
//! through a second mapping and checks it. `--list` prints only the device list (used by tests);
//! `--stress N` creates and destroys N buffers with their memory (scripts/leak-check runs it
//! under valgrind).
//! The environment chooses the driver: `VK_DRIVER_FILES=<manifest>`, `FERRITE_DEVICE=sim`.

use std::process::ExitCode;

use ash::vk;

fn c_name(chars: &[std::ffi::c_char]) -> String {
    // Vulkan name arrays are NUL-terminated; stop at the first NUL.
    chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8 as char)
        .collect()
}

fn version(v: u32) -> String {
    format!(
        "{}.{}.{}",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    )
}

/// What the command line asks for.
#[derive(Clone, Copy)]
enum Mode {
    Demo,
    List,
    Stress(u32),
}

fn parse_args() -> Result<Mode, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => Ok(Mode::Demo),
        ["--list"] => Ok(Mode::List),
        ["--stress", n] => n
            .parse()
            .map(Mode::Stress)
            .map_err(|_| format!("--stress needs a count, got {n:?}")),
        other => Err(format!(
            "usage: ferrite-demo [--list | --stress N] (got {other:?})"
        )),
    }
}

fn main() -> ExitCode {
    match parse_args().and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferrite-demo: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(mode: Mode) -> Result<(), String> {
    // SAFETY: loads the system Vulkan loader (libvulkan.so.1).
    let entry =
        unsafe { ash::Entry::load() }.map_err(|e| format!("cannot load libvulkan.so.1: {e}"))?;
    let app = vk::ApplicationInfo::default()
        .application_name(c"ferrite-demo")
        .api_version(vk::API_VERSION_1_0);
    let info = vk::InstanceCreateInfo::default().application_info(&app);
    // SAFETY: valid create info; destroyed at the end.
    let instance = unsafe { entry.create_instance(&info, None) }
        .map_err(|e| format!("vkCreateInstance: {e}"))?;
    let result = demo(&instance, mode);
    // SAFETY: every child object was destroyed inside demo().
    unsafe { instance.destroy_instance(None) };
    result
}

fn demo(instance: &ash::Instance, mode: Mode) -> Result<(), String> {
    // SAFETY: live instance.
    let pds = match unsafe { instance.enumerate_physical_devices() } {
        Ok(pds) => pds,
        // The loader reports "no device at all" as VK_ERROR_INITIALIZATION_FAILED even when the
        // driver answered with zero devices.
        Err(vk::Result::ERROR_INITIALIZATION_FAILED) => {
            println!("(the loader found no device: vkEnumeratePhysicalDevices returned VK_ERROR_INITIALIZATION_FAILED)");
            Vec::new()
        }
        Err(e) => return Err(format!("vkEnumeratePhysicalDevices: {e}")),
    };
    println!("devices: {}", pds.len());
    for (i, &pd) in pds.iter().enumerate() {
        // SAFETY: a physical device of this instance.
        let p = unsafe { instance.get_physical_device_properties(pd) };
        println!(
            "device {i}: vendor=0x{:04x} device=0x{:04x} name={} api={}",
            p.vendor_id,
            p.device_id,
            c_name(&p.device_name),
            version(p.api_version)
        );
    }
    if let Mode::List = mode {
        return Ok(());
    }
    let &pd = pds.first().ok_or("no Vulkan device found (is FERRITE_DEVICE=sim set and VK_DRIVER_FILES pointing at Ferrite?)")?;

    // SAFETY: a physical device of this instance.
    let (props, mem_props, families) = unsafe {
        (
            instance.get_physical_device_properties(pd),
            instance.get_physical_device_memory_properties(pd),
            instance.get_physical_device_queue_family_properties(pd),
        )
    };
    let l = &props.limits;
    println!("\n== {}", c_name(&props.device_name));
    println!(
        "  driver version {}, Vulkan {}",
        version(props.driver_version),
        version(props.api_version)
    );
    println!(
        "  compute: {} invocations per group, group size {:?}, group count {:?}, {} KiB shared memory",
        l.max_compute_work_group_invocations,
        l.max_compute_work_group_size,
        l.max_compute_work_group_count,
        l.max_compute_shared_memory_size / 1024
    );
    println!(
        "  storage buffer range {} MiB, push constants {} bytes",
        l.max_storage_buffer_range >> 20,
        l.max_push_constants_size
    );
    for (i, f) in families.iter().enumerate() {
        println!("  queue family {i}: {:?} x{}", f.queue_flags, f.queue_count);
    }
    for i in 0..mem_props.memory_heap_count as usize {
        let h = mem_props.memory_heaps[i];
        println!("  memory heap {i}: {} MiB {:?}", h.size >> 20, h.flags);
    }
    for i in 0..mem_props.memory_type_count as usize {
        let t = mem_props.memory_types[i];
        println!(
            "  memory type {i}: heap {} {:?}",
            t.heap_index, t.property_flags
        );
    }

    let prio = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(0)
        .queue_priorities(&prio)];
    let dinfo = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
    // SAFETY: valid create info for a live physical device; destroyed below.
    let device = unsafe { instance.create_device(pd, &dinfo, None) }
        .map_err(|e| format!("vkCreateDevice: {e}"))?;
    let result = match mode {
        Mode::Stress(n) => stress(&device, &mem_props, n),
        _ => buffer_round_trip(&device, &mem_props),
    };
    // SAFETY: all objects of the device were destroyed in buffer_round_trip.
    unsafe { device.destroy_device(None) };
    result
}

fn buffer_round_trip(
    device: &ash::Device,
    mem_props: &vk::PhysicalDeviceMemoryProperties,
) -> Result<(), String> {
    const WORDS: usize = 4096;
    let size = (WORDS * 4) as u64;
    let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    // SAFETY: a live device; every object below is destroyed before returning.
    unsafe {
        let (buffer, memory, req, type_index) =
            ferrite_tests::icd::bound_storage_buffer(device, size, |req| {
                (0..mem_props.memory_type_count)
                    .find(|&i| {
                        req.memory_type_bits & (1 << i) != 0
                            && mem_props.memory_types[i as usize]
                                .property_flags
                                .contains(wanted)
                    })
                    .ok_or_else(|| "no host-visible coherent memory type".to_string())
            })?;
        println!("\n== buffer round trip");
        println!(
            "  buffer of {size} bytes: requirements size {} alignment {}, memory type {type_index}",
            req.size, req.alignment
        );

        let expected: Vec<u32> = (0..WORDS as u32)
            .map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0xFE55_17E0)
            .collect();
        let p = device
            .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            .map_err(|e| format!("vkMapMemory: {e}"))?;
        std::slice::from_raw_parts_mut(p.cast::<u32>(), WORDS).copy_from_slice(&expected);
        device.unmap_memory(memory);
        println!("  wrote {WORDS} words through a mapping, unmapped");

        let p = device
            .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            .map_err(|e| format!("vkMapMemory: {e}"))?;
        let got = std::slice::from_raw_parts(p.cast::<u32>(), WORDS).to_vec();
        device.unmap_memory(memory);
        device.destroy_buffer(buffer, None);
        device.free_memory(memory, None);

        match got.iter().zip(&expected).position(|(g, e)| g != e) {
            None => {
                println!("  mapped again and read back {WORDS} words: all match");
                println!("\nOK");
                Ok(())
            }
            Some(i) => Err(format!(
                "word {i}: read 0x{:08x}, wrote 0x{:08x}",
                got[i], expected[i]
            )),
        }
    }
}

/// Creates and destroys `n` buffers, each with its own memory, bound, mapped and written once.
fn stress(
    device: &ash::Device,
    mem_props: &vk::PhysicalDeviceMemoryProperties,
    n: u32,
) -> Result<(), String> {
    let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE;
    let type_index = (0..mem_props.memory_type_count)
        .find(|&i| {
            mem_props.memory_types[i as usize]
                .property_flags
                .contains(wanted)
        })
        .ok_or("no host-visible memory type")?;
    for i in 0..n {
        let size = 256 + u64::from(i % 64) * 1024;
        // SAFETY: a live device; both objects are destroyed in the same iteration.
        unsafe {
            let (buffer, memory, _, _) =
                ferrite_tests::icd::bound_storage_buffer(device, size, |_| Ok(type_index))
                    .map_err(|e| format!("iteration {i}: {e}"))?;
            let p = device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .map_err(|e| format!("iteration {i}: vkMapMemory: {e}"))?;
            p.cast::<u32>().write(i);
            device.unmap_memory(memory);
            device.destroy_buffer(buffer, None);
            device.free_memory(memory, None);
        }
    }
    println!("created and destroyed {n} buffers and {n} memory objects");
    Ok(())
}
