//! PNG charts (ratings, learning curves): drawn into memory, encoded, and published
//! with the run directory's one atomic write, so a reader never sees half a picture.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{RatingsError, io_err};

/// Chart size in pixels.
const SIZE: (u32, u32) = (900, 540);

/// The area a chart is drawn on.
pub(crate) type Canvas<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// The charts' one typeface, compiled in: a binary that links no font libraries runs on
/// machines without them (GPU images often lack fontconfig and freetype), and every
/// machine draws the same labels. DejaVu Sans, under the Bitstream Vera licence
/// (`assets/DejaVuSans.LICENSE`).
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// The family name the charts ask for.
pub(crate) const FAMILY: &str = "sans-serif";

fn register_font() -> Result<(), String> {
    static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    ok.then_some(())
        .ok_or_else(|| "the embedded chart font could not be read".to_string())
}

/// Draws a chart with `draw` and writes it to `path` as a PNG.
pub(crate) fn write_png(
    path: &Path,
    draw: impl Fn(&Canvas<'_>) -> Result<(), String>,
) -> Result<(), RatingsError> {
    let render = || -> Result<Vec<u8>, String> {
        register_font()?;
        let mut rgb = vec![0u8; SIZE.0 as usize * SIZE.1 as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
            draw(&root)?;
            root.present().map_err(|e| e.to_string())?;
        }
        let mut png = Vec::new();
        let mut encoder = png::Encoder::new(&mut png, SIZE.0, SIZE.1);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&rgb).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
        Ok(png)
    };
    let png = render().map_err(|reason| RatingsError::Plot {
        path: path.to_path_buf(),
        reason,
    })?;
    shogi_rundir::write_atomic(path, &png).map_err(io_err("write", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_font_lays_out_text() {
        register_font().unwrap();
        let font = (FAMILY, 20).into_font();
        let (w, h) = font.box_size("score vs alphabeta:depth=1").unwrap();
        assert!(w > 100 && h > 10, "text laid out as {w}x{h}");
    }
}
