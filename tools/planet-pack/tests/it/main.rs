//! planet-pack end to end, one test binary: [`cli`], the commands on packs
//! the tests write; [`repair`], completing a patch killed part-way.

mod cli;
mod repair;
