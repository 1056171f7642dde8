//! PNG charts (ratings, learning curves): drawn into memory, encoded, and published
//! with the run directory's one atomic write, so a reader never sees half a picture.

use std::path::Path;

use image::ImageEncoder;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{ArenaError, io_err};

/// Chart size in pixels.
const SIZE: (u32, u32) = (900, 540);

/// The area a chart is drawn on.
pub(crate) type Canvas<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// Draws a chart with `draw` (told whether to draw text) and writes it to `path` as a
/// PNG. Text needs a system font; without one, the chart is drawn without labels.
pub(crate) fn write_png(
    path: &Path,
    draw: impl Fn(&Canvas<'_>, bool) -> Result<(), String>,
) -> Result<(), ArenaError> {
    let render = |text: bool| -> Result<Vec<u8>, String> {
        let mut rgb = vec![0u8; SIZE.0 as usize * SIZE.1 as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
            draw(&root, text)?;
            root.present().map_err(|e| e.to_string())?;
        }
        let mut png = Vec::new();
        image::codecs::png::PngEncoder::new(&mut png)
            .write_image(&rgb, SIZE.0, SIZE.1, image::ColorType::Rgb8)
            .map_err(|e| e.to_string())?;
        Ok(png)
    };
    let png = render(true)
        .or_else(|_| render(false))
        .map_err(|reason| ArenaError::Plot {
            path: path.to_path_buf(),
            reason,
        })?;
    shogi_rundir::write_atomic(path, &png).map_err(io_err("write", path))
}
