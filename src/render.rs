//! Pictures of query results: a small flat-shaded software rasteriser.
//!
//! A [`Picture`] collects meshes in world space (with some faces highlighted, e.g. the
//! contact triangles), segments (closest points) and dots (samples); [`Picture::render`]
//! draws them with a z-buffer from a fixed camera fitted to the bounds of everything added,
//! [`Picture::save_png`] writes a PNG (through tiny-skia) and [`Picture::to_svg`] an SVG
//! (painter's algorithm, far triangles first).
//!
//! ```
//! use gprox::geometry::{scene::torus, transform::Pose64};
//! use gprox::render::Picture;
//! let mesh = torus(1.0, 0.3, 24, 12).unwrap();
//! let mut picture = Picture::new(160, 120);
//! picture.add_mesh(&mesh, &Pose64::IDENTITY, Picture::GREY, &[0, 1, 2]);
//! let image = picture.render();
//! assert!(image.covered_pixels > 0 && image.highlighted_pixels > 0);
//! ```

use std::path::{Path, PathBuf};

use glam::{DVec3, Vec3};
use gprox_geometry::transform::{transform_point, Pose64};
use gprox_geometry::TriMesh;

/// Failure to write a picture.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// Zero or too large image size.
    #[error("invalid image size {width}x{height}")]
    Size {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// The file could not be written.
    #[error("{path}: {message}")]
    Write {
        /// The output file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// One triangle in world space.
#[derive(Clone, Copy, Debug)]
struct Tri {
    corners: [Vec3; 3],
    color: [u8; 3],
    highlighted: bool,
}

/// A scene to draw: triangles, segments and dots in world coordinates.
#[derive(Clone, Debug)]
pub struct Picture {
    width: u32,
    height: u32,
    tris: Vec<Tri>,
    segments: Vec<Segment>,
    dots: Vec<(Vec3, [u8; 3])>,
}

/// A segment or arrow drawn on top of the triangles.
#[derive(Clone, Copy, Debug)]
struct Segment {
    ends: [Vec3; 2],
    color: [u8; 3],
    /// Drawn with a head at the second end.
    arrow: bool,
}

/// Colour of the default segments.
const SEGMENT: [u8; 3] = [20, 20, 20];
/// Colour of the default dots.
const DOT: [u8; 3] = [30, 90, 220];

/// The 2-D strokes of a segment in picture coordinates: the shaft, and for an arrow two head
/// strokes (8 pixels, 25° off the shaft).
fn strokes(a: Vec3, b: Vec3, arrow: bool) -> Vec<[[f32; 2]; 2]> {
    let mut out = vec![[[a.x, a.y], [b.x, b.y]]];
    let d = glam::Vec2::new(b.x - a.x, b.y - a.y);
    if arrow && d.length() > 1e-3 {
        let back = -d.normalize() * 8.0;
        for angle in [0.44f32, -0.44] {
            let h = glam::Vec2::from_angle(angle).rotate(back);
            out.push([[b.x, b.y], [b.x + h.x, b.y + h.y]]);
        }
    }
    out
}

/// The rendered image and what is visible in it.
#[derive(Clone, Debug)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major RGBA bytes (opaque).
    pub rgba: Vec<u8>,
    /// Pixels covered by some triangle.
    pub covered_pixels: usize,
    /// Pixels whose visible triangle is highlighted.
    pub highlighted_pixels: usize,
}

/// Orthographic camera: world → (pixel x, pixel y, depth; larger = nearer).
#[derive(Clone, Copy, Debug)]
struct Camera {
    right: Vec3,
    up: Vec3,
    forward: Vec3,
    center: Vec3,
    scale: f32,
    half: [f32; 2],
}

impl Camera {
    /// Fits the fixed view direction to the points' projected extent with a 6 % margin.
    fn fit(points: impl Iterator<Item = Vec3>, width: u32, height: u32) -> Self {
        // Looking from (+x, -y, +z) towards the centre, z up.
        let forward = Vec3::new(-0.55, 0.75, -0.45).normalize();
        let right = forward.cross(Vec3::Z).normalize();
        let up = right.cross(forward);
        let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
        for p in points {
            let q = Vec3::new(p.dot(right), p.dot(up), p.dot(forward));
            lo = lo.min(q);
            hi = hi.max(q);
        }
        if lo.x > hi.x {
            (lo, hi) = (Vec3::splat(-1.0), Vec3::splat(1.0));
        }
        let mid = (lo + hi) * 0.5;
        let center = right * mid.x + up * mid.y + forward * mid.z;
        let (ex, ey) = ((hi.x - lo.x) * 0.5, (hi.y - lo.y) * 0.5);
        let half = [width as f32 * 0.5, height as f32 * 0.5];
        let scale = 0.94 * (half[0] / ex.max(1e-6)).min(half[1] / ey.max(1e-6));
        Self {
            right,
            up,
            forward,
            center,
            scale,
            half,
        }
    }

    fn project(&self, p: Vec3) -> Vec3 {
        let d = p - self.center;
        Vec3::new(
            self.half[0] + d.dot(self.right) * self.scale,
            self.half[1] - d.dot(self.up) * self.scale,
            -d.dot(self.forward),
        )
    }

    /// Flat shade: two-sided Lambert with a head light slightly above.
    fn shade(&self, t: &Tri) -> [u8; 3] {
        let [a, b, c] = t.corners;
        let n = (b - a).cross(c - a).normalize_or_zero();
        let light = (-self.forward + 0.5 * self.up).normalize();
        let k = 0.3 + 0.7 * n.dot(light).abs();
        t.color
            .map(|v| (v as f32 * k).round().clamp(0.0, 255.0) as u8)
    }
}

impl Picture {
    /// Bluish grey, for a first mesh.
    pub const GREY: [u8; 3] = [150, 165, 190];
    /// Sand, for a second mesh.
    pub const SAND: [u8; 3] = [200, 185, 140];
    /// The highlight colour (contact triangles).
    pub const HIGHLIGHT: [u8; 3] = [230, 30, 30];
    /// Background colour.
    pub const BACKGROUND: [u8; 3] = [255, 255, 255];

    /// An empty picture of `width` x `height` pixels.
    pub fn new(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            tris: Vec::new(),
            segments: Vec::new(),
            dots: Vec::new(),
        }
    }

    /// Adds `mesh` placed by `pose`, in `color`, with the faces listed in `highlight` drawn in
    /// [`Picture::HIGHLIGHT`] (indices out of range are ignored).
    pub fn add_mesh(&mut self, mesh: &TriMesh, pose: &Pose64, color: [u8; 3], highlight: &[u32]) {
        let world: Vec<Vec3> = mesh
            .positions()
            .iter()
            .map(|&p| transform_point(pose, p).as_vec3())
            .collect();
        self.add_triangles(&world, mesh.faces(), color, highlight);
    }

    /// Adds world-space triangles given as positions + faces (faces with an index out of range
    /// are skipped).
    pub fn add_triangles(
        &mut self,
        positions: &[Vec3],
        faces: &[[u32; 3]],
        color: [u8; 3],
        highlight: &[u32],
    ) {
        let mut marked = vec![false; faces.len()];
        for &h in highlight {
            if let Some(m) = marked.get_mut(h as usize) {
                *m = true;
            }
        }
        for (f, m) in faces.iter().zip(marked) {
            let corners = f.map(|v| positions.get(v as usize).copied());
            if let [Some(a), Some(b), Some(c)] = corners {
                self.tris.push(Tri {
                    corners: [a, b, c],
                    color: if m { Self::HIGHLIGHT } else { color },
                    highlighted: m,
                });
            }
        }
    }

    /// Adds a segment (e.g. joining two closest points), drawn on top.
    pub fn add_segment(&mut self, a: DVec3, b: DVec3) {
        self.segments.push(Segment {
            ends: [a.as_vec3(), b.as_vec3()],
            color: SEGMENT,
            arrow: false,
        });
    }

    /// Adds a dot (e.g. a penetration sample), drawn on top.
    pub fn add_dot(&mut self, p: DVec3) {
        self.dots.push((p.as_vec3(), DOT));
    }

    /// Adds a dot in `color` (e.g. a penetration sample coloured by its depth, see
    /// [`Picture::depth_color`]).
    pub fn add_dot_colored(&mut self, p: DVec3, color: [u8; 3]) {
        self.dots.push((p.as_vec3(), color));
    }

    /// Adds an arrow from `from` to `to` in `color` (e.g. a penetration direction), drawn on
    /// top with its head at `to`.
    pub fn add_arrow(&mut self, from: DVec3, to: DVec3, color: [u8; 3]) {
        self.segments.push(Segment {
            ends: [from.as_vec3(), to.as_vec3()],
            color,
            arrow: true,
        });
    }

    /// A colour for `t` in `[0, 1]` (clamped): blue (shallow) through green and yellow to red
    /// (deep).
    ///
    /// ```
    /// use gprox::render::Picture;
    /// assert_eq!(Picture::depth_color(0.0), [40, 80, 230]);
    /// assert_eq!(Picture::depth_color(1.0), [220, 30, 30]);
    /// ```
    pub fn depth_color(t: f64) -> [u8; 3] {
        const STOPS: [[f64; 3]; 4] = [
            [40.0, 80.0, 230.0],
            [40.0, 190.0, 90.0],
            [240.0, 210.0, 40.0],
            [220.0, 30.0, 30.0],
        ];
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) } * 3.0;
        let i = (t.floor() as usize).min(2);
        let f = t - i as f64;
        let (a, b) = (STOPS[i], STOPS[i + 1]);
        [0, 1, 2].map(|k| (a[k] + (b[k] - a[k]) * f).round() as u8)
    }

    fn camera(&self) -> Camera {
        let pts = self.tris.iter().flat_map(|t| t.corners);
        let pts = pts
            .chain(self.segments.iter().flat_map(|s| s.ends))
            .chain(self.dots.iter().map(|d| d.0));
        Camera::fit(pts, self.width.max(1), self.height.max(1))
    }

    /// Rasterises the triangles with a z-buffer (segments and dots are drawn by
    /// [`Picture::save_png`] and [`Picture::to_svg`]).
    pub fn render(&self) -> Image {
        let (w, h) = (self.width as usize, self.height as usize);
        let cam = self.camera();
        let mut depth = vec![f32::NEG_INFINITY; w * h];
        let mut owner = vec![u32::MAX; w * h];
        let mut rgba = Vec::with_capacity(w * h * 4);
        for _ in 0..w * h {
            rgba.extend_from_slice(&[255, 255, 255, 255]);
        }
        for (ti, t) in self.tris.iter().enumerate() {
            let [a, b, c] = t.corners.map(|p| cam.project(p));
            let area = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
            if area.abs() < 1e-12 {
                continue;
            }
            let x0 = a.x.min(b.x).min(c.x).floor().max(0.0) as usize;
            let x1 = (a.x.max(b.x).max(c.x).ceil().max(0.0) as usize).min(w);
            let y0 = a.y.min(b.y).min(c.y).floor().max(0.0) as usize;
            let y1 = (a.y.max(b.y).max(c.y).ceil().max(0.0) as usize).min(h);
            let color = cam.shade(t);
            for y in y0..y1 {
                for x in x0..x1 {
                    let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
                    let w0 = ((b.x - px) * (c.y - py) - (b.y - py) * (c.x - px)) / area;
                    let w1 = ((c.x - px) * (a.y - py) - (c.y - py) * (a.x - px)) / area;
                    let w2 = 1.0 - w0 - w1;
                    if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                        continue;
                    }
                    let z = w0 * a.z + w1 * b.z + w2 * c.z;
                    let k = y * w + x;
                    // Highlighted faces win ties so contacts stay visible on coplanar overlap.
                    if z > depth[k] || (z == depth[k] && t.highlighted) {
                        depth[k] = z;
                        owner[k] = ti as u32;
                        rgba[4 * k..4 * k + 3].copy_from_slice(&color);
                    }
                }
            }
        }
        let covered_pixels = owner.iter().filter(|&&o| o != u32::MAX).count();
        let highlighted_pixels = owner
            .iter()
            .filter(|&&o| o != u32::MAX && self.tris[o as usize].highlighted)
            .count();
        Image {
            width: self.width,
            height: self.height,
            rgba,
            covered_pixels,
            highlighted_pixels,
        }
    }

    /// Renders and writes a PNG to `path`, with dots, then segments and arrows, drawn on top.
    pub fn save_png(&self, path: impl AsRef<Path>) -> Result<Image, RenderError> {
        let path = path.as_ref();
        let size_err = RenderError::Size {
            width: self.width,
            height: self.height,
        };
        if self.width == 0 || self.height == 0 || self.width > 16384 || self.height > 16384 {
            return Err(size_err);
        }
        let image = self.render();
        let mut pixmap = tiny_skia::Pixmap::new(self.width, self.height).ok_or(size_err)?;
        pixmap.data_mut().copy_from_slice(&image.rgba);
        let cam = self.camera();
        let mut paint = tiny_skia::Paint {
            anti_alias: true,
            ..Default::default()
        };
        let stroke = tiny_skia::Stroke {
            width: 2.0,
            ..Default::default()
        };
        for (d, [r, g, b]) in &self.dots {
            paint.set_color_rgba8(*r, *g, *b, 255);
            let d = cam.project(*d);
            if let Some(p) = tiny_skia::PathBuilder::from_circle(d.x, d.y, 2.5) {
                let t = tiny_skia::Transform::identity();
                pixmap.fill_path(&p, &paint, tiny_skia::FillRule::Winding, t, None);
            }
        }
        for seg in &self.segments {
            let [r, g, b] = seg.color;
            paint.set_color_rgba8(r, g, b, 255);
            let [a, b] = seg.ends.map(|p| cam.project(p));
            let mut pb = tiny_skia::PathBuilder::new();
            for [x, y] in strokes(a, b, seg.arrow) {
                pb.move_to(x[0], x[1]);
                pb.line_to(y[0], y[1]);
            }
            if let Some(p) = pb.finish() {
                let t = tiny_skia::Transform::identity();
                pixmap.stroke_path(&p, &paint, &stroke, t, None);
            }
        }
        pixmap.save_png(path).map_err(|e| RenderError::Write {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(image)
    }

    /// The picture as SVG text: triangles far to near (painter's algorithm), then dots, then
    /// segments and arrows.
    pub fn to_svg(&self) -> String {
        use std::fmt::Write;
        let cam = self.camera();
        let mut order: Vec<(f32, usize)> = self
            .tris
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let z = t.corners.iter().map(|&p| cam.project(p).z).sum::<f32>() / 3.0;
                (z, i)
            })
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (w, h) = (self.width, self.height);
        let mut s = String::with_capacity(64 * self.tris.len() + 256);
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">"#
        );
        let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        for (_, i) in order {
            let t = &self.tris[i];
            let [a, b, c] = t.corners.map(|p| cam.project(p));
            let [r, g, bl] = cam.shade(t);
            let _ = writeln!(
                s,
                r##"<polygon points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="#{r:02x}{g:02x}{bl:02x}" stroke="#{r:02x}{g:02x}{bl:02x}" stroke-width="0.3"/>"##,
                a.x, a.y, b.x, b.y, c.x, c.y
            );
        }
        for (d, [r, g, b]) in &self.dots {
            let d = cam.project(*d);
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="rgb({r},{g},{b})"/>"#,
                d.x, d.y
            );
        }
        for seg in &self.segments {
            let [a, b] = seg.ends.map(|p| cam.project(p));
            let [r, g, bl] = seg.color;
            for [x, y] in strokes(a, b, seg.arrow) {
                let _ = writeln!(
                    s,
                    r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="rgb({r},{g},{bl})" stroke-width="2"/>"#,
                    x[0], x[1], y[0], y[1]
                );
            }
        }
        s.push_str("</svg>\n");
        s
    }

    /// Writes [`Picture::to_svg`] to `path`.
    pub fn save_svg(&self, path: impl AsRef<Path>) -> Result<(), RenderError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_svg()).map_err(|e| RenderError::Write {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }
}
