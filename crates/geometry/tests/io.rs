//! Mesh I/O: one test per bad input (error variant and location), round trips, and the real
//! meshes of `../shared/data/meshes` against the counts in their `index.csv`.

#[path = "../../../tests/common/gen.rs"]
mod gen;

use std::path::Path;

use gprox_geometry::glam::Vec3;
use gprox_geometry::io::{
    self, load_mesh, obj_from_bytes, ply_from_bytes, stl_from_bytes, write_obj, write_stl,
};
use gprox_geometry::{GeometryError, TriMesh};
use proptest::prelude::*;

/// The `location` of a `Parse` error, or a panic naming what came instead.
fn parse_location(r: Result<TriMesh, GeometryError>) -> (Option<usize>, String) {
    match r {
        Err(GeometryError::Parse {
            location, message, ..
        }) => (location, message),
        other => panic!("expected GeometryError::Parse, got {other:?}"),
    }
}

/// The validation error inside an `InvalidMesh`.
fn invalid_mesh(r: Result<TriMesh, GeometryError>) -> GeometryError {
    match r {
        Err(GeometryError::InvalidMesh { source, .. }) => *source,
        other => panic!("expected GeometryError::InvalidMesh, got {other:?}"),
    }
}

fn quad_mesh() -> TriMesh {
    TriMesh::new(
        vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.5, 0.0, -0.25),
            Vec3::new(0.1, 1.0, 3.0e-7),
            Vec3::new(1.0, 1.0, 1.0),
        ],
        vec![[0, 1, 2], [2, 1, 3]],
    )
    .unwrap()
}

fn binary_stl(mesh: &TriMesh) -> Vec<u8> {
    let mut out = Vec::new();
    write_stl(mesh, &mut out).unwrap();
    out
}

const PLY_HEADER: &str = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\n\
    property float y\nproperty float z\nelement face 2\nproperty list uchar int vertex_indices\n\
    end_header\n";

// ---------------------------------------------------------------- bad inputs

#[test]
fn nan_vertex() {
    let e = TriMesh::new(
        vec![Vec3::ZERO, Vec3::new(0.0, f32::NAN, 0.0), Vec3::X],
        vec![[0, 1, 2]],
    );
    assert!(
        matches!(e, Err(GeometryError::NonFiniteVertex { index: 1, .. })),
        "{e:?}"
    );
    // OBJ: the line of the bad vertex.
    let (line, msg) = parse_location(obj_from_bytes(
        b"v 0 0 0\n# c\nv 1 NaN 0\nv 0 1 0\nf 1 2 3\n",
    ));
    assert_eq!(line, Some(3), "{msg}");
    // Binary STL: the byte offset of the bad coordinate (triangle 1, corner 2, y).
    let mut stl = binary_stl(&quad_mesh());
    let at = 84 + 50 + 12 + 2 * 12 + 4;
    stl[at..at + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    let (off, msg) = parse_location(stl_from_bytes(&stl));
    assert_eq!(off, Some(at), "{msg}");
    assert!(msg.contains("triangle 1"), "{msg}");
    // ASCII PLY: the parser rejects the line (header is 9 lines, vertex 2 is line 12).
    let ply = format!("{PLY_HEADER}0 0 0\n1 0 0\n0 1 nan\n1 1 0\n3 0 1 2\n3 1 3 2\n");
    let (line, msg) = parse_location(ply_from_bytes(ply.as_bytes()));
    assert_eq!(line, Some(12), "{msg}");
    // Binary PLY: validation names the vertex.
    let mut bin = b"ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\n\
        property float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\n\
        end_header\n"
        .to_vec();
    for c in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, f32::NAN, 0.0] {
        bin.extend_from_slice(&c.to_le_bytes());
    }
    bin.push(3);
    for i in [0i32, 1, 2] {
        bin.extend_from_slice(&i.to_le_bytes());
    }
    let e = invalid_mesh(ply_from_bytes(&bin));
    assert!(
        matches!(e, GeometryError::NonFiniteVertex { index: 2, .. }),
        "{e:?}"
    );
}

#[test]
fn index_out_of_range() {
    let e = TriMesh::new(
        vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        vec![[0, 1, 2], [0, 3, 1]],
    );
    assert!(
        matches!(
            e,
            Err(GeometryError::IndexOutOfRange {
                face: 1,
                vertex: 3,
                vertex_count: 3
            })
        ),
        "{e:?}"
    );
    let (line, msg) = parse_location(obj_from_bytes(
        b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 4\n",
    ));
    assert_eq!(line, Some(5), "{msg}");
    let (line, msg) = parse_location(obj_from_bytes(b"v 0 0 0\nv 1 0 0\nf 1 2 -3\nv 0 1 0\n"));
    assert_eq!(line, Some(3), "{msg}");
    let (line, msg) = parse_location(obj_from_bytes(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n"));
    assert_eq!(line, Some(4), "{msg}");
    // PLY: the face element index.
    let ply = format!("{PLY_HEADER}0 0 0\n1 0 0\n0 1 0\n1 1 0\n3 0 1 2\n3 1 4 2\n");
    let (face, msg) = parse_location(ply_from_bytes(ply.as_bytes()));
    assert_eq!(face, Some(1), "{msg}");
}

#[test]
fn empty_mesh() {
    let e = TriMesh::new(vec![], vec![]);
    assert!(
        matches!(
            e,
            Err(GeometryError::EmptyMesh {
                what: "no vertices"
            })
        ),
        "{e:?}"
    );
    let e = TriMesh::new(vec![Vec3::ZERO], vec![]);
    assert!(
        matches!(e, Err(GeometryError::EmptyMesh { what: "no faces" })),
        "{e:?}"
    );
    let e = invalid_mesh(obj_from_bytes(b"v 0 0 0\nv 1 0 0\nv 0 1 0\n"));
    assert!(matches!(e, GeometryError::EmptyMesh { .. }), "{e:?}");
    let mut stl = vec![0u8; 84]; // binary STL with zero triangles
    stl[..5].copy_from_slice(b"empty");
    let e = invalid_mesh(stl_from_bytes(&stl));
    assert!(matches!(e, GeometryError::EmptyMesh { .. }), "{e:?}");
    let e = invalid_mesh(stl_from_bytes(b"solid e\nendsolid e\n"));
    assert!(matches!(e, GeometryError::EmptyMesh { .. }), "{e:?}");
}

#[test]
fn truncated_stl() {
    let stl = binary_stl(&quad_mesh());
    assert_eq!(stl.len(), 84 + 2 * 50);
    let cut = &stl[..84 + 50 + 20];
    let (off, msg) = parse_location(stl_from_bytes(cut));
    assert_eq!(off, Some(84 + 50), "{msg}");
    assert!(
        msg.contains("184 bytes") && msg.contains("154 bytes"),
        "{msg}"
    );
    assert!(msg.contains("triangle 1"), "{msg}");
    let (off, msg) = parse_location(stl_from_bytes(&stl[..40]));
    assert_eq!(off, Some(40), "{msg}");
    // ASCII STL cut inside a facet: the line after the last one.
    let text = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n";
    let (line, msg) = parse_location(stl_from_bytes(text.as_bytes()));
    assert_eq!(line, Some(6), "{msg}");
}

#[test]
fn garbage_obj_line() {
    let (line, msg) = parse_location(obj_from_bytes(b"v 0 0 0\nv 1 0 0\nv 1 zz 0\nf 1 2 3\n"));
    assert_eq!(line, Some(3), "{msg}");
    let (line, msg) = parse_location(obj_from_bytes(b"v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 two 3\n"));
    assert_eq!(line, Some(5), "{msg}");
    let (line, msg) = parse_location(obj_from_bytes(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n"));
    assert_eq!(line, Some(4), "{msg}");
    let (line, msg) = parse_location(obj_from_bytes(b"v 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"));
    assert_eq!(line, Some(1), "{msg}");
    let (line, msg) = parse_location(obj_from_bytes(
        b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n\xff\n",
    ));
    assert_eq!(line, Some(5), "{msg}");
}

#[test]
fn garbage_ascii_stl_line() {
    let text = "solid t\nfacet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 oops 0\n  \
                vertex 0 1 0\n endloop\nendfacet\nendsolid t\n";
    let (line, msg) = parse_location(stl_from_bytes(text.as_bytes()));
    assert_eq!(line, Some(5), "{msg}");
}

#[test]
fn bad_ply() {
    // Header garbage: the parser's line.
    let (line, msg) = parse_location(ply_from_bytes(
        b"ply\nformat ascii 1.0\nelement vertex 1\nbogus line\nend_header\n0 0 0\n",
    ));
    assert_eq!(line, Some(4), "{msg}");
    // A payload line with too few values.
    let ply = format!("{PLY_HEADER}0 0 0\n1 0\n0 1 0\n1 1 0\n3 0 1 2\n3 1 3 2\n");
    let (line, msg) = parse_location(ply_from_bytes(ply.as_bytes()));
    assert!(line.is_some(), "{msg}");
    // A face with two vertices: its element index.
    let ply = format!("{PLY_HEADER}0 0 0\n1 0 0\n0 1 0\n1 1 0\n3 0 1 2\n2 1 3\n");
    let (face, msg) = parse_location(ply_from_bytes(ply.as_bytes()));
    assert_eq!(face, Some(1), "{msg}");
    // Not a PLY file at all.
    assert!(matches!(
        ply_from_bytes(b"solid x\n"),
        Err(GeometryError::Parse { .. })
    ));
}

#[test]
fn unsupported_extension_and_missing_file() {
    let r = load_mesh("mesh.xyz");
    assert!(
        matches!(r, Err(GeometryError::UnsupportedFormat { .. })),
        "{r:?}"
    );
    let r = load_mesh("/nonexistent/dir/mesh.obj");
    assert!(matches!(r, Err(GeometryError::Io { .. })), "{r:?}");
}

// ---------------------------------------------------------------- formats and round trips

/// Face corner coordinates (bit patterns): the geometry, independent of vertex numbering.
fn corner_bits(m: &TriMesh) -> Vec<[[u32; 3]; 3]> {
    (0..m.face_count())
        .map(|i| m.triangle(i).map(|p| p.to_array().map(f32::to_bits)))
        .collect()
}

#[test]
fn obj_polygons_groups_and_attributes() {
    let text = b"# a quad and a pentagon in two groups, with texture and normal indices\n\
        v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvn 0 0 1\n\
        o first\nf 1/1/1 2/1/1 3/1/1 4/1/1\n\
        v 2 0 0\no second\nf -1//1 2//1 3//1 3 4\n";
    let m = obj_from_bytes(text).unwrap();
    assert_eq!(m.face_count(), 2 + 3);
    // Fan triangulation keeps the first corner.
    assert_eq!(
        m.triangle(0),
        [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0)]
    );
    assert_eq!(m.triangle(2)[0], Vec3::new(2.0, 0.0, 0.0));
}

#[test]
fn stl_binary_with_solid_header_and_ascii_are_both_read() {
    let m = quad_mesh();
    let mut stl = binary_stl(&m);
    stl[..11].copy_from_slice(b"solid fake ");
    let back = stl_from_bytes(&stl).unwrap();
    assert_eq!(corner_bits(&back), corner_bits(&m));
    assert_eq!(back.vertex_count(), 4); // welded

    let mut ascii = String::from("solid t\n");
    for i in 0..m.face_count() {
        ascii.push_str("facet normal 0 0 0\nouter loop\n");
        for p in m.triangle(i) {
            ascii.push_str(&format!("vertex {:e} {:e} {:e}\n", p.x, p.y, p.z));
        }
        ascii.push_str("endloop\nendfacet\n");
    }
    ascii.push_str("endsolid t\n");
    let back = stl_from_bytes(ascii.as_bytes()).unwrap();
    assert_eq!(corner_bits(&back), corner_bits(&m));
    assert_eq!(back.vertex_count(), 4);
}

#[test]
fn ply_ascii_and_binary() {
    let ply = format!("{PLY_HEADER}0 0 0\n1 0 0\n0 1 0\n1 1 0.5\n3 0 1 2\n4 1 3 2 0\n");
    let m = ply_from_bytes(ply.as_bytes()).unwrap();
    assert_eq!(m.faces(), &[[0, 1, 2], [1, 3, 2], [1, 2, 0]]);
    assert_eq!(m.positions()[3], Vec3::new(1.0, 1.0, 0.5));

    let mut bin = b"ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty double x\n\
        property double y\nproperty double z\nelement face 1\nproperty list uchar uint vertex_indices\n\
        end_header\n"
        .to_vec();
    for v in [[0.0f64, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.5, 0.25]] {
        for c in v {
            bin.extend_from_slice(&c.to_le_bytes());
        }
    }
    bin.push(3);
    for i in [2u32, 1, 0] {
        bin.extend_from_slice(&i.to_le_bytes());
    }
    let m = ply_from_bytes(&bin).unwrap();
    assert_eq!(m.faces(), &[[2, 1, 0]]);
    assert_eq!(m.positions()[2], Vec3::new(0.0, 0.5, 0.25));
}

#[test]
fn load_mesh_from_files() {
    let dir = std::env::temp_dir().join(format!("gprox-io-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let m = quad_mesh();
    let obj = dir.join("quad.OBJ");
    write_obj(&m, std::fs::File::create(&obj).unwrap()).unwrap();
    let stl = dir.join("quad.stl");
    write_stl(&m, std::fs::File::create(&stl).unwrap()).unwrap();
    assert_eq!(load_mesh(&obj).unwrap(), m);
    assert_eq!(corner_bits(&load_mesh(&stl).unwrap()), corner_bits(&m));
    // Errors name the file.
    std::fs::write(dir.join("bad.obj"), "v 0 0 0\nf 1 1 x\n").unwrap();
    match load_mesh(dir.join("bad.obj")) {
        Err(GeometryError::Parse {
            path,
            location: Some(2),
            ..
        }) => {
            assert_eq!(path, dir.join("bad.obj"))
        }
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn obj_round_trip_is_exact(m in gen::float_mesh(12, 16)) {
        let mut text = Vec::new();
        write_obj(&m, &mut text).unwrap();
        // Unused vertices are dropped by tobj's per-object re-indexing; compare geometry.
        let back = obj_from_bytes(&text).unwrap();
        prop_assert_eq!(corner_bits(&back), corner_bits(&m));
    }

    #[test]
    fn stl_round_trip_is_exact_and_welds(m in gen::grid_mesh(12, 16, 3)) {
        let back = stl_from_bytes(&binary_stl(&m)).unwrap();
        prop_assert_eq!(corner_bits(&back), corner_bits(&m));
        // Welding merges exactly the bit-identical positions of the used vertices.
        let mut used: Vec<[u32; 3]> = m.faces().iter().flatten()
            .map(|&v| m.positions()[v as usize].to_array().map(f32::to_bits)).collect();
        used.sort();
        used.dedup();
        prop_assert_eq!(back.vertex_count(), used.len());
    }
}

// ---------------------------------------------------------------- real data

#[test]
fn shared_meshes_match_index_csv() {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/meshes"
    ));
    let Ok(index) = std::fs::read_to_string(root.join("index.csv")) else {
        eprintln!("note: {} absent, skipping", root.display());
        return;
    };
    let mut checked = 0;
    for row in index.lines().skip(1) {
        let cols: Vec<&str> = row.splitn(15, ',').collect();
        let (file, tris, verts) = (cols[0], cols[1], cols[2]);
        let path = root.join(file);
        if !path.exists() {
            continue;
        }
        let m = io::load_mesh(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.face_count().to_string(), tris, "{file}: triangles");
        assert_eq!(
            m.vertex_count().to_string(),
            verts,
            "{file}: vertices after welding"
        );
        let parse3 = |s: &str| -> Vec<f32> { s.split(' ').map(|x| x.parse().unwrap()).collect() };
        let (lo, hi) = (parse3(cols[12]), parse3(cols[13]));
        let min = m.positions().iter().fold(Vec3::INFINITY, |a, &p| a.min(p));
        let max = m
            .positions()
            .iter()
            .fold(Vec3::NEG_INFINITY, |a, &p| a.max(p));
        assert_eq!(min.to_array().to_vec(), lo, "{file}: bbox min");
        assert_eq!(max.to_array().to_vec(), hi, "{file}: bbox max");
        checked += 1;
    }
    assert!(checked > 0, "index.csv lists no readable mesh");
    eprintln!("checked {checked} meshes against index.csv");
}

#[test]
fn truncated_binary_stl_with_solid_header_is_reported_as_binary() {
    let mut stl = binary_stl(&quad_mesh());
    stl[..6].copy_from_slice(b"solid ");
    let (off, msg) = parse_location(stl_from_bytes(&stl[..84 + 50 + 49]));
    assert_eq!(off, Some(84 + 50), "{msg}");
    assert!(msg.contains("truncated"), "{msg}");
}
