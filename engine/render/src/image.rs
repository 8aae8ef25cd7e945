//! A rendered image on the host, and writing it as PNG without ever leaving
//! a half-written file (temporary file, then rename).

use std::path::Path;

use crate::error::{RenderError, Result};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbaImage {
    pub width: u32,
    pub height: u32,
    /// Row-major RGBA8, top row first.
    pub pixels: Vec<u8>,
}

impl RgbaImage {
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let k = 4 * (y * self.width + x) as usize;
        [self.pixels[k], self.pixels[k + 1], self.pixels[k + 2], self.pixels[k + 3]]
    }

    /// Writes the image as a PNG at `path`, whole or not at all, or into a
    /// FIFO or a character device there (`planet_terrain::files`).
    pub fn save_png(&self, path: &Path) -> Result<()> {
        let fail = |message: String| RenderError::Image { path: path.display().to_string(), message };
        planet_terrain::files::write_whole(path, |out| {
            let mut encoder = png::Encoder::new(out, self.width, self.height);
            encoder.set_color(png::ColorType::Rgba);
            encoder.set_depth(png::BitDepth::Eight);
            let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
            writer.write_image_data(&self.pixels).map_err(std::io::Error::other)?;
            writer.finish().map_err(std::io::Error::other)
        })
        .map_err(|e| fail(e.to_string()))
    }

    pub fn load_png(path: &Path) -> Result<RgbaImage> {
        let fail = |message: String| RenderError::Image { path: path.display().to_string(), message };
        let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
        let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().map_err(|e| fail(e.to_string()))?;
        let mut buffer = vec![0u8; reader.output_buffer_size().ok_or_else(|| fail("image too large".into()))?];
        let info = reader.next_frame(&mut buffer).map_err(|e| fail(e.to_string()))?;
        if info.color_type != png::ColorType::Rgba || info.bit_depth != png::BitDepth::Eight {
            return Err(fail(format!("expected 8-bit RGBA, found {:?} {:?}", info.color_type, info.bit_depth)));
        }
        buffer.truncate(info.buffer_size());
        Ok(RgbaImage { width: info.width, height: info.height, pixels: buffer })
    }
}
