# Log-log plots as one SVG on stdout, drawn from lines of
#   PANEL<TAB>SERIES<TAB>X<TAB>Y
# (X and Y > 0; panels and series in order of first appearance, at most
# four series). -v cols=N sets the panels per row (default 2); -v
# xlabel=TEXT names the x axis of every panel. A dashed grey line through
# each panel's first series' first point has slope 1: linear growth.
# Plain SVG 1.1, no script, no external font: any browser or viewer
# draws it.

BEGIN {
  FS = "\t"
  if (!cols) cols = 2
  W = 380; H = 280; L = 64; R = 16; T = 34; B = 46  # a panel and its margins
  split("#1f5fa8 #d9771e #6b6b6b #2f8f4e", colour, " ")
  split("none 7,4 2,3 10,3,2,3", dash, " ")
}

function lg(v) { return log(v) / log(10) }
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
# A tick label: 1, 10, 100, 1k, 10k, ...
function num(v) {
  if (v >= 1000000) return (v / 1000000) "M"
  if (v >= 1000) return (v / 1000) "k"
  return v
}

$0 != "" && $3 > 0 && $4 > 0 {
  p = $1; s = $2
  if (!(p in pidx)) { pidx[p] = ++np; pname[np] = p }
  if (!((p, s) in sidx)) { sidx[p, s] = ++ns[p]; sname[p, ns[p]] = s }
  k = sidx[p, s]
  n = ++npts[p, k]
  px[p, k, n] = $3; py[p, k, n] = $4
  if (!(p in ylo) || $4 < ylo[p]) ylo[p] = $4
  if (!(p in yhi) || $4 > yhi[p]) yhi[p] = $4
  if (!(p in xlo) || $3 < xlo[p]) xlo[p] = $3
  if (!(p in xhi) || $3 > xhi[p]) xhi[p] = $3
}

END {
  rows = int((np + cols - 1) / cols)
  tw = cols * W; th = rows * H
  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n", tw, th, tw, th
  printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", tw, th
  for (i = 1; i <= np; i++) panel(i)
  print "</svg>"
}

function panel(i,   p, ox, oy, pw, ph, x0, x1, y0, y1, d, v, X, Y, k, n, pts, m, lx, ly) {
  p = pname[i]
  ox = ((i - 1) % cols) * W; oy = int((i - 1) / cols) * H
  pw = W - L - R; ph = H - T - B
  # Whole decades around the data on both axes.
  x0 = int(lg(xlo[p]) + 100) - 100; x1 = -int(-lg(xhi[p]) + 100) + 100
  y0 = int(lg(ylo[p]) + 100) - 100; y1 = -int(-lg(yhi[p]) + 100) + 100
  if (x1 == x0) x1++
  if (y1 == y0) y1++
  sx = pw / (x1 - x0); sy = ph / (y1 - y0)
  printf "<g transform=\"translate(%d,%d)\">\n", ox + L, oy + T
  printf "<text x=\"%d\" y=\"-14\" font-size=\"13\" font-weight=\"bold\">%s</text>\n", -L + 8, esc(p)
  printf "<rect width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", pw, ph
  # Grid: every 1, 2 and 5 of each decade; labels on the decades.
  for (d = x0; d <= x1; d++) for (m = 1; m <= 9; m++) {
    v = lg(m) + d
    if (v > x1) break
    X = (v - x0) * sx
    printf "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", X, X, ph, (m == 1 ? "#ccc" : "#eee")
    if (m == 1 || m == 2 || m == 5)
      printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", X, ph + 14, num(m * 10 ^ d)
  }
  for (d = y0; d <= y1; d++) for (m = 1; m <= 9; m++) {
    v = lg(m) + d
    if (v > y1) break
    Y = ph - (v - y0) * sy
    printf "<line x1=\"0\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n", Y, pw, Y, (m == 1 ? "#ccc" : "#eee")
    if (m == 1 || ((m == 2 || m == 5) && y1 - y0 <= 3))
      printf "<text x=\"-6\" y=\"%.1f\" text-anchor=\"end\" dominant-baseline=\"middle\">%s</text>\n", Y, num(m * 10 ^ d)
  }
  printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", pw / 2, ph + 32, esc(xlabel)
  printf "<clipPath id=\"c%d\"><rect width=\"%d\" height=\"%d\"/></clipPath>\n", i, pw, ph
  # Slope 1 through the first series' first point, clipped to the box.
  lx = lg(px[p, 1, 1]); ly = lg(py[p, 1, 1])
  printf "<line clip-path=\"url(#c%d)\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#aaa\" stroke-dasharray=\"2,4\"/>\n", \
    i, (lx - x0) * sx, ph - (ly - y0) * sy, (x1 - x0) * sx, ph - (ly + x1 - lx - y0) * sy
  for (k = 1; k <= ns[p]; k++) {
    pts = ""
    for (n = 1; n <= npts[p, k]; n++)
      pts = pts sprintf("%.1f,%.1f ", (lg(px[p, k, n]) - x0) * sx, ph - (lg(py[p, k, n]) - y0) * sy)
    printf "<polyline clip-path=\"url(#c%d)\" points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"/>\n", i, pts, colour[k], dash[k]
    for (n = 1; n <= npts[p, k]; n++)
      printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", (lg(px[p, k, n]) - x0) * sx, ph - (lg(py[p, k, n]) - y0) * sy, colour[k]
  }
  # Legend, top left inside the box, on a white ground over the lines.
  m = 0
  for (k = 1; k <= ns[p]; k++) if (length(sname[p, k]) > m) m = length(sname[p, k])
  printf "<rect x=\"4\" y=\"3\" width=\"%d\" height=\"%d\" fill=\"white\" fill-opacity=\"0.9\"/>\n", 40 + 6.5 * m, 14 * ns[p] + 4
  for (k = 1; k <= ns[p]; k++) {
    printf "<line x1=\"8\" y1=\"%d\" x2=\"30\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"/>\n", 12 + 14 * (k - 1), 12 + 14 * (k - 1), colour[k], dash[k]
    printf "<text x=\"36\" y=\"%d\" dominant-baseline=\"middle\">%s</text>\n", 12 + 14 * (k - 1), esc(sname[p, k])
  }
  print "</g>"
}
