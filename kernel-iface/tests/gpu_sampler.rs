//! Sampler messages from EU code through EXECBUFFER2: ld and sample_lz (with a header that
//! points at the sampler-state table) on a Y-tiled image.

mod gpu_common;

use ferrite_isa::sampler_msg::{SamplerDesc, SamplerMsgType, SamplerSimd};
use ferrite_isa::surface_format::SurfaceFormat;
use gpu_common::*;
use kernel_iface::genxml::{RenderSurfaceState, SamplerBorderColorState, SamplerState};
use kernel_iface::image::{ImageDesc, ImageDim, ImageLayout, Tiling};

const SAMPLER_OFFSET: u64 = 0x5000;
const BORDER_OFFSET: u64 = 0x5040;

#[test]
fn ld_and_sample_lz_read_a_tiled_image() {
    // BTI 1: an 8x4 R32_UINT Y-tiled image, texel (x, y) = 1000 + x + 100 y.
    // Thread t, lane x reads texel (x, t) with ld (no header) into BTI 2 and with
    // sample_lz at the texel centre, nearest filtering, into BTI 3.
    let desc = ImageDesc {
        dim: ImageDim::D2,
        format: SurfaceFormat::R32_UINT,
        extent: [8, 4, 1],
        levels: 1,
        layers: 1,
        tiling: Tiling::TileY,
    };
    let layout = ImageLayout::new(&desc).unwrap();
    let (g, data) = compute_setup(&[layout.size, 4096, 4096]);
    for y in 0..4 {
        for x in 0..8 {
            let off = layout.texel_address(x, y, 0, 0) as usize;
            g.write_u32s(data[0], off, &[1000 + x + 100 * y]);
        }
    }
    let ld = SamplerDesc::new(1, 0, SamplerMsgType::Ld, SamplerSimd::Simd8, false, 3, 4);
    let lz = SamplerDesc::new(
        1,
        0,
        SamplerMsgType::SampleLz,
        SamplerSimd::Simd8,
        true,
        2,
        4,
    );
    let asm = format!(
        "{LINEAR8}
and(8) g12<1>UD g4<8,8,1>UD 0x00000007UD {{ align1 1Q }};
shr(8) g13<1>UD g4<8,8,1>UD 0x00000003UD {{ align1 1Q }};
mov(8) g14<1>UD 0x00000000UD {{ align1 1Q }};
send(8) g20<1>UW g12<8,8,1>UD {ld:#010x} sampler MsgDesc: ld SIMD8 Surface = 1 Sampler = 0 mlen 3 rlen 4 {{ align1 1Q }};
sends(8) nullUD g10UD g20UD 0x02026e02 0x00000040 dp data 1 MsgDesc: untyped write {{ align1 1Q }};
mov(8) g30<1>UD g0<8,8,1>UD {{ align1 WE_all 1Q }};
mov(1) g30.2<1>UD 0x00000000UD {{ align1 WE_all 1N }};
mov(1) g30.3<1>UD {SAMPLER_OFFSET:#010x}UD {{ align1 WE_all 1N }};
mov(8) g31<1>F g12<8,8,1>UD {{ align1 1Q }};
add(8) g31<1>F g31<8,8,1>F 0x3f000000F {{ align1 1Q }};
mul(8) g31<1>F g31<8,8,1>F 0x3e000000F {{ align1 1Q }};
mov(8) g32<1>F g13<8,8,1>UD {{ align1 1Q }};
add(8) g32<1>F g32<8,8,1>F 0x3f000000F {{ align1 1Q }};
mul(8) g32<1>F g32<8,8,1>F 0x3e800000F {{ align1 1Q }};
send(8) g40<1>UW g30<8,8,1>UD {lz:#010x} sampler MsgDesc: sample_lz SIMD8 Surface = 1 Sampler = 0 mlen 3 rlen 4 {{ align1 1Q }};
sends(8) nullUD g10UD g40UD 0x02026e03 0x00000040 dp data 1 MsgDesc: untyped write {{ align1 1Q }};
{EOT8}",
        ld = ld.encode(),
        lz = lz.encode(),
    );
    let d = Dispatch {
        asm: &asm,
        simd: 8,
        group_size: 32,
        push: [32, 0, 0, 0, 0, 0, 0, 0],
        buffers: &[(data[0], 4), (data[1], 4096), (data[2], 4096)],
        ..Default::default()
    };
    build_dispatch(&g, &d, KERNEL_BO, STATE_BO, BATCH_BO);
    let f = layout.surface_state_fields();
    let ss = RenderSurfaceState {
        surface_type: 1,
        surface_format: SurfaceFormat::R32_UINT as u64,
        tile_mode: f.tile_mode,
        surface_horizontal_alignment: f.halign,
        surface_vertical_alignment: f.valign,
        width: f.width,
        height: f.height,
        surface_pitch: f.surface_pitch,
        shader_channel_select_red: 4,
        shader_channel_select_green: 5,
        shader_channel_select_blue: 6,
        shader_channel_select_alpha: 7,
        surface_base_address: g.bos[data[0]].addr,
        ..Default::default()
    };
    g.write_u32s(STATE_BO, SS_OFFSET as usize, &ss.to_dwords());
    let sampler = SamplerState {
        tcx_address_control_mode: 2,
        tcy_address_control_mode: 2,
        tcz_address_control_mode: 2,
        border_color_pointer: BORDER_OFFSET,
        ..Default::default()
    };
    g.write_u32s(STATE_BO, SAMPLER_OFFSET as usize, &sampler.to_dwords());
    let border = SamplerBorderColorState::default();
    g.write_u32s(STATE_BO, BORDER_OFFSET as usize, &border.to_dwords());
    assert_eq!(g.submit(BATCH_BO).unwrap(), Outcome::Ok);
    let by_ld = g.read_u32s(data[1], 0, 32);
    let by_sample = g.read_u32s(data[2], 0, 32);
    for i in 0..32u32 {
        let want = 1000 + i % 8 + 100 * (i / 8);
        assert_eq!(by_ld[i as usize], want, "ld of texel {i}");
        assert_eq!(by_sample[i as usize], want, "sample_lz of texel {i}");
    }
}
