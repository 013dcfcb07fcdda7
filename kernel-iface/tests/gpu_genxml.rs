//! The generated genxml packers/unpackers against encodings known from Mesa-driven hardware
//! batches (docs/gen9.md 6.1, observed anv batch) and the PRM opcode values.

use kernel_iface::genxml::*;

#[test]
fn headers_match_the_known_opcodes() {
    assert_eq!(MiNoop::default().to_dwords(), [0]);
    assert_eq!(MiBatchBufferEnd::default().to_dwords(), [0x0500_0000]);
    assert_eq!(MiBatchBufferStart::default().to_dwords()[0], 0x1880_0001);
    assert_eq!(MiStoreDataImm::default().to_dwords()[0], 0x1000_0002);
    assert_eq!(MiLoadRegisterImm::default().to_dwords()[0], 0x1100_0001);
    assert_eq!(MiStoreRegisterMem::default().to_dwords()[0], 0x1200_0002);
    assert_eq!(PipeControl::default().to_dwords()[0], 0x7A00_0004);
    assert_eq!(PipelineSelect::default().to_dwords()[0], 0x6904_0000);
    assert_eq!(StateBaseAddress::default().to_dwords()[0], 0x6101_0011);
    assert_eq!(MediaVfeState::default().to_dwords()[0], 0x7000_0007);
    assert_eq!(MediaCurbeLoad::default().to_dwords()[0], 0x7001_0002);
    assert_eq!(
        MediaInterfaceDescriptorLoad::default().to_dwords()[0],
        0x7002_0002
    );
    assert_eq!(GpgpuWalker::default().to_dwords()[0], 0x7105_000D);
    assert_eq!(MediaStateFlush::default().to_dwords()[0], 0x7004_0000);
    assert_eq!(L3cntlreg::NUM, 0x7034);
}

#[test]
fn identify_gives_name_and_length() {
    assert_eq!(Command::identify(0x7A00_0004), Some(("PIPE_CONTROL", 6)));
    assert_eq!(
        Command::identify(0x1100_0003),
        Some(("MI_LOAD_REGISTER_IMM", 5))
    );
    assert_eq!(Command::identify(0x7105_000D), Some(("GPGPU_WALKER", 15)));
    assert_eq!(Command::identify(0xE000_0000), None);
}

#[test]
fn buffer_surface_state_matches_the_observed_anv_encoding() {
    // 1000-byte SSBO (docs/gen9.md 6.1): DW0 0x87FD4000, DW1 0x04000000, DW2 0x00070067,
    // DW7 0x00010000.
    let n = 999u64;
    let ss = RenderSurfaceState {
        surface_type: 4,
        surface_format: 0x1FF,
        surface_vertical_alignment: 1,
        surface_horizontal_alignment: 1,
        mocs: 4,
        width: n & 0x7F,
        height: (n >> 7) & 0x3FFF,
        depth: (n >> 21) & 0x7FF,
        shader_channel_select_alpha: 1,
        surface_base_address: 0x1234_5000,
        ..Default::default()
    };
    let dw = ss.to_dwords();
    assert_eq!(dw.len(), 16);
    assert_eq!(dw[0], 0x87FD_4000);
    assert_eq!(dw[1], 0x0400_0000);
    assert_eq!(dw[2], 0x0007_0067);
    assert_eq!(dw[7], 0x0001_0000);
    assert_eq!((dw[8], dw[9]), (0x1234_5000, 0));
    assert_eq!(RenderSurfaceState::unpack(&dw), ss);
    // The shared builder the driver and the tests use writes exactly this state.
    assert_eq!(
        raw_buffer_surface(0x1234_5000, 1000).to_dwords()[..3],
        dw[..3]
    );
    assert_eq!(raw_buffer_surface(0x1234_5000, 1000), ss);
    assert_eq!(buffer_surface_elements(&ss), 1000);
}

#[test]
fn address_fields_keep_their_bit_positions() {
    let c = MiStoreDataImm {
        address: 0x0000_1234_5678_9ABC,
        immediate_data: 0xDEAD_BEEF,
        ..Default::default()
    };
    let dw = c.to_dwords();
    assert_eq!(dw[1], 0x5678_9ABC);
    assert_eq!(dw[2], 0x1234);
    assert_eq!(dw[3], 0xDEAD_BEEF);
    let idd = InterfaceDescriptorData {
        kernel_start_pointer: 0x1_2340,
        binding_table_pointer: 0x40,
        number_of_threads_in_gpgpu_thread_group: 2,
        shared_local_memory_size: 1,
        barrier_enable: true,
        cross_thread_constant_data_read_length: 14,
        constant_urb_entry_read_length: 1,
        ..Default::default()
    };
    let dw = idd.to_dwords();
    assert_eq!(dw[0], 0x1_2340);
    assert_eq!(dw[4] & 0xFFE0, 0x40);
    assert_eq!(dw[5] >> 16, 1);
    assert_eq!(dw[6] & 0x3FF, 2);
    assert_eq!((dw[6] >> 16) & 0x1F, 1);
    assert_eq!(dw[6] >> 21 & 1, 1);
    assert_eq!(dw[7] & 0xFF, 14);
    assert_eq!(InterfaceDescriptorData::unpack(&dw), idd);
}

#[test]
fn every_command_round_trips_and_displays_its_fields() {
    let walker = GpgpuWalker {
        simd_size: 1,
        thread_width_counter_maximum: 1,
        thread_group_id_x_dimension: 7,
        thread_group_id_y_dimension: 3,
        thread_group_id_z_dimension: 2,
        right_execution_mask: 0xF,
        bottom_execution_mask: 0xFFFF_FFFF,
        indirect_parameter_enable: true,
        ..Default::default()
    };
    let dw = walker.to_dwords();
    match Command::unpack(&dw) {
        Some(Command::GpgpuWalker(w)) => assert_eq!(w, walker),
        other => panic!("{other:?}"),
    }
    let text = describe(&dw);
    assert!(text.starts_with("GPGPU_WALKER"), "{text}");
    assert!(text.contains("Right Execution Mask: 0xf"), "{text}");
    assert!(text.contains("Indirect Parameter Enable: true"), "{text}");
    let sba = StateBaseAddress {
        general_state_base_address_modify_enable: true,
        surface_state_base_address: 0xFFFF_F000_0000,
        surface_state_base_address_modify_enable: true,
        instruction_base_address: 0x1_0000_0000,
        instruction_base_address_modify_enable: true,
        general_state_buffer_size: 0xFFFFF,
        ..Default::default()
    };
    assert_eq!(
        Command::unpack(&sba.to_dwords()),
        Some(Command::StateBaseAddress(sba))
    );
    assert_eq!(describe(&[0xE000_0000]), "unknown command 0xe0000000");
}

#[test]
fn bit_helpers_span_dwords() {
    let mut dw = [0u32; 3];
    set_bits(&mut dw, 28, 39, 0xABC);
    assert_eq!(dw, [0xC000_0000, 0xAB, 0]);
    assert_eq!(get_bits(&dw, 28, 39), 0xABC);
    assert_eq!(sign_extend(0xFFF, 12), -1);
    let mut dw = [0u32; 4];
    set_address(&mut dw, 34, 95, 0x8000_0000_1000);
    assert_eq!(dw, [0, 0x1000, 0x8000, 0]);
    assert_eq!(get_address(&dw, 34, 95), 0x8000_0000_1000);
}
