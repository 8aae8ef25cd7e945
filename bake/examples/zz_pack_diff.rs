//! throwaway: tile-level differences between two packs (not committed)
use planet_terrain::pack::Pack;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (p, q) = (Pack::open(&a[1]).unwrap(), Pack::open(&a[2]).unwrap());
    let (mut tiles, mut differ, mut qmax, mut mmax, mut emax, mut nq) = (0, 0, 0u32, 0f64, 0f64, 0usize);
    for key in p.keys() {
        let t = key.unwrap().address();
        let (ea, eb) = (p.entry(t).unwrap().unwrap(), q.entry(t).unwrap().unwrap());
        let (da, db) = (p.read_tile(t).unwrap(), q.read_tile(t).unwrap());
        tiles += 1;
        let (ha, hb) = (da.heights(), db.heights());
        let md = ha.iter().zip(&hb).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
        let qd =
            da.quantised.iter().zip(&db.quantised).map(|(x, y)| (*x as i32 - *y as i32).unsigned_abs()).max().unwrap();
        nq += da.quantised.iter().zip(&db.quantised).filter(|(x, y)| x != y).count();
        let ed = (ea.geometric_error as f64 - eb.geometric_error as f64).abs();
        if md > 0.0
            || ed > 0.0
            || ea.min_elevation != eb.min_elevation
            || ea.max_elevation != eb.max_elevation
            || ea.measured != eb.measured
        {
            differ += 1;
        }
        qmax = qmax.max(qd);
        mmax = mmax.max(md);
        emax = emax.max(ed);
    }
    println!(
        "tiles {tiles}, differing {differ}, samples differing {nq}, max quantised diff {qmax}, max height diff {mmax} m, max geometric error diff {emax} m"
    );
}
