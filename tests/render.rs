//! Pictures: the built-in scene renders with its contact triangles highlighted.

use gprox::geometry::glam::DVec3;
use gprox::geometry::scene::{torus, Scene};
use gprox::geometry::transform::Pose64;
use gprox::render::Picture;
use gprox::{Backend, CollideOptions, Context};

fn is_highlight(px: &[u8]) -> bool {
    // Shaded versions of Picture::HIGHLIGHT: strongly red, little green and blue.
    px[0] > 60 && px[0] as u32 > 3 * px[1] as u32 && px[0] as u32 > 3 * px[2] as u32
}

#[test]
fn builtin_scene_picture_shows_contacts() {
    let scene = Scene::builtin();
    let ctx = Context::new(Backend::Cpu).unwrap();
    let a = ctx.model(scene.mesh(0).clone()).unwrap();
    let b = ctx.model(scene.mesh(1).clone()).unwrap();
    let f = (0..scene.frame_count())
        .max_by_key(|&f| {
            ctx.collide_all(
                &a,
                &scene.pose(f, 0),
                &b,
                &scene.pose(f, 1),
                &CollideOptions::default(),
            )
            .unwrap()
            .len()
        })
        .unwrap();
    let pairs = ctx
        .collide_all(
            &a,
            &scene.pose(f, 0),
            &b,
            &scene.pose(f, 1),
            &CollideOptions::default(),
        )
        .unwrap();
    assert!(!pairs.is_empty());
    let mut pic = Picture::new(320, 240);
    let fa: Vec<u32> = pairs.iter().map(|p| p[0]).collect();
    let fb: Vec<u32> = pairs.iter().map(|p| p[1]).collect();
    pic.add_mesh(a.mesh(), &scene.pose64(f, 0), Picture::GREY, &fa);
    pic.add_mesh(b.mesh(), &scene.pose64(f, 1), Picture::SAND, &fb);

    let dir = std::env::temp_dir().join(format!("gprox-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("builtin.png");
    let image = pic.save_png(&png).unwrap();
    assert!(
        image.covered_pixels > 320 * 240 / 20,
        "{}",
        image.covered_pixels
    );
    assert!(image.highlighted_pixels > 0);

    // Read the file back independently and look at the pixels themselves.
    let pixmap = tiny_skia::Pixmap::load_png(&png).unwrap();
    assert_eq!((pixmap.width(), pixmap.height()), (320, 240));
    let data = pixmap.data();
    let non_white = data
        .chunks_exact(4)
        .filter(|p| p[..3] != [255, 255, 255])
        .count();
    let red = data.chunks_exact(4).filter(|p| is_highlight(p)).count();
    assert!(non_white > 320 * 240 / 20);
    assert!(
        red > 0 && red == image.highlighted_pixels,
        "{red} vs {}",
        image.highlighted_pixels
    );

    // The SVG has one polygon per triangle, the highlighted ones in red shades.
    let svg = pic.to_svg();
    let polys = svg.matches("<polygon").count();
    assert_eq!(polys, a.face_count() + b.face_count());
    pic.save_svg(dir.join("builtin.svg")).unwrap();
}

#[test]
fn no_highlight_means_no_red_pixels() {
    let mesh = torus(1.0, 0.3, 24, 12).unwrap();
    let mut pic = Picture::new(200, 150);
    pic.add_mesh(&mesh, &Pose64::IDENTITY, Picture::GREY, &[]);
    let image = pic.render();
    assert!(image.covered_pixels > 0);
    assert_eq!(image.highlighted_pixels, 0);
    assert_eq!(
        image
            .rgba
            .chunks_exact(4)
            .filter(|p| is_highlight(p))
            .count(),
        0
    );
}

#[test]
fn empty_picture_is_background_and_overlays_draw() {
    let pic = Picture::new(64, 48);
    let image = pic.render();
    assert_eq!(image.covered_pixels, 0);
    assert!(image
        .rgba
        .chunks_exact(4)
        .all(|p| p == [255, 255, 255, 255]));
    // Segments and dots land in the PNG on top of the meshes.
    let mut pic = Picture::new(64, 48);
    pic.add_segment(DVec3::new(-1.0, 0.0, 0.0), DVec3::new(1.0, 0.0, 0.0));
    pic.add_dot(DVec3::new(0.0, 0.0, 1.0));
    let path = std::env::temp_dir().join(format!("gprox-overlay-{}.png", std::process::id()));
    pic.save_png(&path).unwrap();
    let pixmap = tiny_skia::Pixmap::load_png(&path).unwrap();
    let drawn = pixmap
        .data()
        .chunks_exact(4)
        .filter(|p| p[..3] != [255, 255, 255])
        .count();
    assert!(drawn > 10);
    assert!(Picture::new(0, 10).save_png(&path).is_err());
}
