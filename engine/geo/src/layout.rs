//! How a struct shared with the GPU declares its layout once.
//!
//! The key decision: [`gpu_struct!`](crate::gpu_struct) writes the `#[repr(C)]` Pod struct and
//! a table of its fields (name, GLSL type, offset) from one declaration, and
//! a compile-time check that the fields are packed in declaration order with
//! no padding, which is exactly the GLSL `scalar`/`std430` layout of the
//! types used here. [`crate::abi`] renders those tables into the shaders'
//! generated header, so a new field or a reordered one changes the Rust
//! struct and the GLSL struct together, or fails to compile.
//!
//! This module is the bottom of the crate: it knows no geometry.

/// One field of a GPU-shared struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuField {
    pub name: &'static str,
    /// The GLSL type the field is declared with (`vec3`, `uint`, a struct).
    pub glsl: &'static str,
    pub offset: usize,
    pub size: usize,
}

/// A struct the GPU reads, with its layout as a table.
pub trait GpuStruct: bytemuck::Pod {
    /// The struct's name in GLSL.
    const NAME: &'static str;
    /// Every field, in declaration order.
    fn fields() -> Vec<GpuField>;
}

/// A Rust field type and the GLSL type that reads the same bytes.
pub trait GlslType {
    const GLSL: &'static str;
}

macro_rules! glsl_types {
    ($($rust:ty => $glsl:literal),* $(,)?) => {
        $(impl GlslType for $rust { const GLSL: &'static str = $glsl; })*
    };
}

glsl_types! {
    f32 => "float",
    u32 => "uint",
    [f32; 2] => "vec2",
    [f32; 3] => "vec3",
    [f32; 4] => "vec4",
}

/// True when `fields` (offset, size) follow each other with no gap from
/// offset 0 and end at `size`: the packed layout every shared struct uses.
pub const fn is_packed(fields: &[(usize, usize)], size: usize) -> bool {
    let mut end = 0;
    let mut k = 0;
    while k < fields.len() {
        if fields[k].0 != end {
            return false;
        }
        end += fields[k].1;
        k += 1;
    }
    end == size
}

/// Declares a struct shared with the GPU: `#[repr(C)]`, Pod, its field
/// table, and compile-time asserts of its size and of every field's offset.
#[macro_export]
macro_rules! gpu_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident [size = $size:literal] {
            $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty,)*
        }

        const _: () = assert!(std::mem::size_of::<$name>() == $size, concat!(stringify!($name), ": size changed"));
        const _: () = assert!(
            $crate::layout::is_packed(
                &[$((std::mem::offset_of!($name, $field), std::mem::size_of::<$ty>())),*],
                $size,
            ),
            concat!(stringify!($name), ": fields are not packed in declaration order"),
        );

        impl $crate::layout::GpuStruct for $name {
            const NAME: &'static str = stringify!($name);
            fn fields() -> Vec<$crate::layout::GpuField> {
                vec![$($crate::layout::GpuField {
                    name: stringify!($field),
                    glsl: <$ty as $crate::layout::GlslType>::GLSL,
                    offset: std::mem::offset_of!($name, $field),
                    size: std::mem::size_of::<$ty>(),
                }),*]
            }
        }

        impl $crate::layout::GlslType for $name {
            const GLSL: &'static str = stringify!($name);
        }
    };
}
