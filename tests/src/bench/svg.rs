//! The pieces the bench's SVG charts share.

/// The opening of a `w` by `h` chart on a white background, up to and with its newline.
pub fn open(w: f64, h: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n"
    )
}

/// A horizontal grid line at height `y` from `left` to `right`, its `label` to the left of it.
pub fn grid_line(left: f64, right: f64, y: f64, label: impl std::fmt::Display) -> String {
    format!(
        "<line x1=\"{left}\" x2=\"{right}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
         <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>\n",
        left - 6.0,
        y + 4.0
    )
}
