//! Reference sampler: the Vulkan spec's texel coordinate and filtering formulas on a plain
//! array of decoded texels, written without the simulated sampler's code (it shares only
//! the format codec, through the decoded texels the caller supplies). Tests run both and
//! compare.
//!
//! Spec steps used: LOD `lambda = clamp(lod + bias, minLod, maxLod)`; magnification iff
//! `lambda <= 0`; level `d = base + clamp(lambda, 0, q)` with nearest `ceil(d + 0.5) - 1` or
//! linear between `floor(d)` and `floor(d) + 1` (weight `frac(d)`); unnormalized texel
//! coordinates `u = s * width + offset`; nearest `i = floor(u)`; linear `i0 = floor(u - 0.5)`,
//! `i1 = i0 + 1`, `alpha = frac(u - 0.5)`; wrapping per "Wrapping Operation"; border texels
//! take the border colour in the format's components; cube maps are seamless. Weights are rounded to 8 fractional bits, the precision Gen9 (and
//! anv's `subTexelPrecisionBits`/`mipmapPrecisionBits`) reports.

/// Kind of reference image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    D1,
    D2,
    D3,
    Cube,
}

/// One mip level: `w x h x n` texels (n = 3-D depth or layers; cube: 6 per cube), as
/// register bits (f32 for float-class formats), index `(z * h + y) * w + x`.
#[derive(Debug, Clone)]
pub struct RefLevel {
    pub w: u32,
    pub h: u32,
    pub n: u32,
    pub texels: Vec<[u32; 4]>,
}

/// An image as the reference sees it.
#[derive(Debug, Clone)]
pub struct RefImage {
    pub kind: RefKind,
    pub arrayed: bool,
    /// Integer formats are fetched without filtering and without float conversion.
    pub integer: bool,
    /// Which of R, G, B, A the format stores (border replacement fills only those).
    pub present: [bool; 4],
    pub levels: Vec<RefLevel>,
}

/// Wrap modes (Vulkan's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefWrap {
    Repeat,
    MirroredRepeat,
    ClampToEdge,
    ClampToBorder,
    MirrorClampToEdge,
}

/// A VkSampler as the reference sees it.
#[derive(Debug, Clone, Copy)]
pub struct RefSampler {
    pub mag_linear: bool,
    pub min_linear: bool,
    /// None = only the base level; Some(false) = nearest; Some(true) = linear.
    pub mip_linear: Option<bool>,
    pub wrap: [RefWrap; 3],
    pub bias: f64,
    pub min_lod: f64,
    pub max_lod: f64,
    pub unnormalized: bool,
    pub border: [u32; 4],
}

fn q8(x: f64) -> f64 {
    (x * 256.0).round() / 256.0
}

/// "Wrapping Operation": the texel index, or None for a border texel.
fn wrapped(i: i64, size: i64, w: RefWrap) -> Option<i64> {
    match w {
        RefWrap::Repeat => Some(((i % size) + size) % size),
        RefWrap::MirroredRepeat => {
            // (size - 1) - mirror((i mod 2size) - size)
            let m = ((i % (2 * size)) + 2 * size) % (2 * size) - size;
            let mirror = if m >= 0 { m } else { -(1 + m) };
            Some((size - 1) - mirror)
        }
        RefWrap::ClampToEdge => Some(i.max(0).min(size - 1)),
        RefWrap::ClampToBorder => {
            if i < 0 || i >= size {
                None
            } else {
                Some(i)
            }
        }
        RefWrap::MirrorClampToEdge => {
            let mirror = if i >= 0 { i } else { -(1 + i) };
            Some(mirror.min(size - 1))
        }
    }
}

impl RefImage {
    fn dims(&self) -> usize {
        match self.kind {
            RefKind::D1 => 1,
            RefKind::D2 | RefKind::Cube => 2,
            RefKind::D3 => 3,
        }
    }

    fn as_f64(&self, t: [u32; 4]) -> [f64; 4] {
        if self.integer {
            [t[0] as f64, t[1] as f64, t[2] as f64, t[3] as f64]
        } else {
            [0, 1, 2, 3].map(|c| f32::from_bits(t[c]) as f64)
        }
    }

    /// "Border Replacement": the border colour in the format's components; the others
    /// are what a texel of the format lacks (0, and 1 for alpha).
    fn border_texel(&self, smp: &RefSampler) -> [u32; 4] {
        let one = if self.integer { 1 } else { 1.0f32.to_bits() };
        [0, 1, 2, 3].map(|c| {
            if self.present[c] {
                smp.border[c]
            } else if c == 3 {
                one
            } else {
                0
            }
        })
    }

    /// Texel (i, j, k) of `level` (k = 3-D slice or layer) after wrapping.
    fn fetch_wrapped(&self, level: usize, ijk: [i64; 3], smp: &RefSampler) -> [u32; 4] {
        let lv = &self.levels[level];
        if self.kind == RefKind::Cube {
            return self.fetch_cube(level, ijk);
        }
        let size = [lv.w as i64, lv.h as i64, lv.n as i64];
        let mut c = ijk;
        for d in 0..self.dims() {
            match wrapped(ijk[d], size[d], smp.wrap[d]) {
                Some(v) => c[d] = v,
                None => return self.border_texel(smp),
            }
        }
        let idx = (c[2] as usize * lv.h as usize + c[1] as usize) * lv.w as usize + c[0] as usize;
        lv.texels[idx]
    }

    /// "Cube Map Edge Handling": an out-of-face texel is read from the neighbouring face.
    /// The texel centre on the (extended) face plane becomes a direction whose face is
    /// selected again; a corner texel is the average of the three incident faces' texels.
    fn fetch_cube(&self, level: usize, ijk: [i64; 3]) -> [u32; 4] {
        let lv = &self.levels[level];
        let size = lv.w as i64;
        let cube_first = ijk[2] - ijk[2] % 6;
        let face = ijk[2] % 6;
        let at = |i: i64, j: i64, f: i64| -> [u32; 4] {
            lv.texels[(((cube_first + f) * lv.h as i64 + j) * lv.w as i64 + i) as usize]
        };
        let out_i = ijk[0] < 0 || ijk[0] >= size;
        let out_j = ijk[1] < 0 || ijk[1] >= size;
        let neighbour = |i: i64, j: i64| -> [u32; 4] {
            // Face-plane coordinates of the texel centre, in [-1, 1] on the face.
            let a = ((i as f64 + 0.5) / size as f64) * 2.0 - 1.0;
            let b = ((j as f64 + 0.5) / size as f64) * 2.0 - 1.0;
            // The inverse of the face table: direction = major axis + a * s-axis + b * t-axis.
            let (x, y, z) = match face {
                0 => (1.0, -b, -a),
                1 => (-1.0, -b, a),
                2 => (a, 1.0, b),
                3 => (a, -1.0, -b),
                4 => (a, -b, 1.0),
                _ => (-a, -b, -1.0),
            };
            let (f2, s2, t2) = self.cube(x, y, z);
            let i2 = ((s2 * size as f64).floor() as i64).max(0).min(size - 1);
            let j2 = ((t2 * size as f64).floor() as i64).max(0).min(size - 1);
            at(i2, j2, f2)
        };
        if !out_i && !out_j {
            return at(ijk[0], ijk[1], face);
        }
        if out_i && out_j {
            let ci = ijk[0].max(0).min(size - 1);
            let cj = ijk[1].max(0).min(size - 1);
            let three = [
                at(ci, cj, face),
                neighbour(ijk[0], cj),
                neighbour(ci, ijk[1]),
            ];
            let mut avg = [0u32; 4];
            for (c, v) in avg.iter_mut().enumerate() {
                let s: f64 = three.iter().map(|t| f32::from_bits(t[c]) as f64).sum();
                *v = ((s / 3.0) as f32).to_bits();
            }
            return avg;
        }
        neighbour(ijk[0], ijk[1])
    }

    /// One level filtered at (s, t, r) with layer `layer`.
    fn filter_level(
        &self,
        level: usize,
        str_: [f64; 3],
        layer: i64,
        offsets: [i32; 3],
        linear: bool,
        smp: &RefSampler,
    ) -> [f64; 4] {
        let lv = &self.levels[level];
        let size = [lv.w as f64, lv.h as f64, lv.n as f64];
        let n = self.dims();
        let mut u = [0.0; 3];
        for d in 0..n {
            let scale = if smp.unnormalized { 1.0 } else { size[d] };
            u[d] = str_[d] * scale + offsets[d] as f64;
        }
        if !linear || self.integer {
            let mut ijk = [0i64, 0, layer];
            for d in 0..n {
                ijk[d] = u[d].floor() as i64;
                if self.kind == RefKind::Cube {
                    // NEAREST within a level is treated as CLAMP_TO_EDGE for cube maps.
                    ijk[d] = ijk[d].max(0).min(lv.w as i64 - 1);
                }
            }
            return self.as_f64(self.fetch_wrapped(level, ijk, smp));
        }
        let mut i0 = [0i64, 0, layer];
        let mut a = [0.0; 3];
        for d in 0..n {
            i0[d] = (u[d] - 0.5).floor() as i64;
            a[d] = q8((u[d] - 0.5) - (u[d] - 0.5).floor());
        }
        let mut out = [0.0; 4];
        // Sum over the 2, 4 or 8 corners of the footprint.
        for corner in 0..(1 << n) {
            let mut ijk = i0;
            let mut weight = 1.0;
            for d in 0..n {
                if corner & (1 << d) != 0 {
                    ijk[d] += 1;
                    weight *= a[d];
                } else {
                    weight *= 1.0 - a[d];
                }
            }
            let t = self.as_f64(self.fetch_wrapped(level, ijk, smp));
            for c in 0..4 {
                out[c] += weight * t[c];
            }
        }
        out
    }

    /// Vulkan "Cube Map Face Selection and Transformations" (table of major axes).
    fn cube(&self, rx: f64, ry: f64, rz: f64) -> (i64, f64, f64) {
        let (ax, ay, az) = (rx.abs(), ry.abs(), rz.abs());
        // The spec's recommended tie rules: z beats y and x, y beats x.
        let major = if az >= ax && az >= ay {
            2
        } else if ay >= ax {
            1
        } else {
            0
        };
        let (face, sc, tc, ma) = match (major, [rx, ry, rz][major] >= 0.0) {
            (0, true) => (0, -rz, -ry, ax),
            (0, false) => (1, rz, -ry, ax),
            (1, true) => (2, rx, rz, ay),
            (1, false) => (3, rx, -rz, ay),
            (_, true) => (4, rx, -ry, az),
            (_, false) => (5, -rx, -ry, az),
        };
        if ma == 0.0 {
            return (face, 0.5, 0.5);
        }
        (face, (sc / ma + 1.0) / 2.0, (tc / ma + 1.0) / 2.0)
    }

    /// OpImageSampleExplicitLod: the result as register bits.
    pub fn sample(
        &self,
        smp: &RefSampler,
        coord: [f32; 4],
        lod: f32,
        offsets: [i32; 3],
    ) -> [u32; 4] {
        let c = coord.map(|v| v as f64);
        let layers = self.levels[0].n as i64;
        let (str_, layer, offsets, smp) = match self.kind {
            RefKind::D1 => {
                let l = if self.arrayed {
                    c[1].round_ties_even() as i64
                } else {
                    0
                };
                ([c[0], 0.0, 0.0], l.clamp(0, layers - 1), offsets, *smp)
            }
            RefKind::D2 => {
                let l = if self.arrayed {
                    c[2].round_ties_even() as i64
                } else {
                    0
                };
                ([c[0], c[1], 0.0], l.clamp(0, layers - 1), offsets, *smp)
            }
            RefKind::D3 => ([c[0], c[1], c[2]], 0, offsets, *smp),
            RefKind::Cube => {
                let (face, s, t) = self.cube(coord[0] as f64, coord[1] as f64, coord[2] as f64);
                let cubes = layers / 6;
                let cube = if self.arrayed {
                    (c[3].round_ties_even() as i64).clamp(0, cubes - 1)
                } else {
                    0
                };
                ([s, t, 0.0], cube * 6 + face, [0; 3], *smp)
            }
        };
        let q = (self.levels.len() - 1) as f64;
        let lambda = (lod as f64 + smp.bias).max(smp.min_lod).min(smp.max_lod);
        let linear = if lambda <= 0.0 {
            smp.mag_linear
        } else {
            smp.min_linear
        };
        let v = match (smp.unnormalized, smp.mip_linear) {
            (true, _) | (false, None) => self.filter_level(0, str_, layer, offsets, linear, &smp),
            (false, Some(false)) => {
                let d = ((lambda.max(0.0).min(q)) + 0.5).ceil() - 1.0;
                self.filter_level(d as usize, str_, layer, offsets, linear, &smp)
            }
            (false, Some(true)) => {
                let d = lambda.max(0.0).min(q);
                let (lo, hi) = (d.floor() as usize, (d.floor() as usize + 1).min(q as usize));
                let delta = q8(d - d.floor());
                let a = self.filter_level(lo, str_, layer, offsets, linear, &smp);
                if delta == 0.0 {
                    a
                } else {
                    let b = self.filter_level(hi, str_, layer, offsets, linear, &smp);
                    [0, 1, 2, 3].map(|k| (1.0 - delta) * a[k] + delta * b[k])
                }
            }
        };
        if self.integer {
            v.map(|x| x as u32)
        } else {
            v.map(|x| (x as f32).to_bits())
        }
    }

    /// OpImageFetch at integer (x, y|layer, z|layer) and level `lod`; 0 when outside.
    pub fn fetch(&self, c: [i32; 3], lod: i32, offsets: [i32; 3]) -> [u32; 4] {
        if lod < 0 || lod as usize >= self.levels.len() {
            return [0; 4];
        }
        let lv = &self.levels[lod as usize];
        let (x, y, z) = match (self.kind, self.arrayed) {
            (RefKind::D1, true) => (c[0] + offsets[0], 0, c[1]),
            (RefKind::D1, false) => (c[0] + offsets[0], 0, 0),
            (RefKind::D3, _) => (c[0] + offsets[0], c[1] + offsets[1], c[2] + offsets[2]),
            (_, true) => (c[0] + offsets[0], c[1] + offsets[1], c[2]),
            (_, false) => (c[0] + offsets[0], c[1] + offsets[1], 0),
        };
        if x < 0 || y < 0 || z < 0 || x as u32 >= lv.w || y as u32 >= lv.h || z as u32 >= lv.n {
            return [0; 4];
        }
        lv.texels[((z as u32 * lv.h + y as u32) * lv.w + x as u32) as usize]
    }

    /// OpImageGather of component `comp` at level 0: texels (i0,j1), (i1,j1), (i1,j0), (i0,j0).
    pub fn gather(
        &self,
        smp: &RefSampler,
        coord: [f32; 4],
        comp: usize,
        offsets: [i32; 2],
    ) -> [u32; 4] {
        let lv = &self.levels[0];
        let scale = |d: usize| {
            if smp.unnormalized {
                1.0
            } else {
                [lv.w, lv.h][d] as f64
            }
        };
        let u = coord[0] as f64 * scale(0) + offsets[0] as f64 - 0.5;
        let v = coord[1] as f64 * scale(1) + offsets[1] as f64 - 0.5;
        let layer = if self.arrayed {
            (coord[2].round_ties_even() as i64).clamp(0, lv.n as i64 - 1)
        } else {
            0
        };
        let (i0, j0) = (u.floor() as i64, v.floor() as i64);
        let pick = |i: i64, j: i64| self.fetch_wrapped(0, [i, j, layer], smp)[comp];
        [
            pick(i0, j0 + 1),
            pick(i0 + 1, j0 + 1),
            pick(i0 + 1, j0),
            pick(i0, j0),
        ]
    }
}
