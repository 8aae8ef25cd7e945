//! `planet-bake shard I/N|auto`: which part of a sharded bake this process bakes.
//!
//! The key decision: `auto` reads only the variables the schedulers
//! themselves set for a task of an array (Slurm's `SLURM_ARRAY_TASK_*`,
//! Kubernetes' `JOB_COMPLETION_INDEX` of an Indexed Job), so one command
//! line serves every task. The cluster scripts also pass the count
//! (`--count`), which makes a Slurm task's array index its shard
//! index: re-submitting one failed task (`sbatch --array=2`) bakes shard 2
//! of the same plan, where the array's own count would say 1.

/// One part of a sharded bake: `index` of `count`, counted from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// The most shards a bake may be cut into.
pub const MAX_SHARDS: u32 = 1 << 16;

/// What `planet-bake shard` was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardArg {
    Given(Shard),
    /// Take the part from the scheduler's environment.
    Auto,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

fn count_in_range(count: u32, what: &str) -> Result<u32, String> {
    if (1..=MAX_SHARDS).contains(&count) {
        Ok(count)
    } else {
        Err(format!("{what} {count}: a bake is cut into 1 to {MAX_SHARDS} shards"))
    }
}

fn whole(text: &str, what: &str) -> Result<u32, String> {
    text.trim().parse().map_err(|_| format!("{what} '{text}' is not a whole number"))
}

/// Parses `I/N` (0 <= I < N) or `auto`.
pub fn shard(text: &str) -> Result<ShardArg, String> {
    if text.trim() == "auto" {
        return Ok(ShardArg::Auto);
    }
    let Some((i, n)) = text.split_once('/') else {
        return Err(format!("'{text}': give I/N (shard I of N, counted from 0) or auto"));
    };
    let (index, count) = (whole(i, "shard index")?, count_in_range(whole(n, "shard count")?, "shard count")?);
    if index >= count {
        return Err(format!("'{text}': the shard index counts from 0, so it must be below the count {count}"));
    }
    Ok(ShardArg::Given(Shard { index, count }))
}

/// The part a scheduler's task bakes, from its environment (`var`):
/// a Slurm job array (`SLURM_ARRAY_TASK_ID`, with the count from
/// `SLURM_ARRAY_TASK_COUNT` or `..._MIN`/`..._MAX`), or a Kubernetes
/// Indexed Job (`JOB_COMPLETION_INDEX`, with the count from `count` (the
/// `--count` flag) or `PLANET_SHARD_COUNT`). With `count` given, a
/// Slurm task's array index is its shard index, so re-submitting one task
/// of an array (`--array=2`) bakes the same shard.
pub fn shard_from_scheduler(count: Option<u32>, var: impl Fn(&str) -> Option<String>) -> Result<Shard, String> {
    let number = |name: &str| var(name).map(|v| whole(&v, name)).transpose();
    if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
        if number("SLURM_ARRAY_TASK_STEP")?.is_some_and(|s| s != 1) {
            return Err(
                "shard auto: this Slurm array has a step other than 1 (--array=A-B:S); give I/N explicitly".into()
            );
        }
        if let Some(count) = count {
            // The array's indices are the shards' own: a re-submitted
            // subset (`sbatch --array=2`) bakes shard 2 of the same count.
            let count = count_in_range(count, "--count")?;
            if id >= count {
                return Err(format!("shard auto: SLURM_ARRAY_TASK_ID {id} is not below --count {count}"));
            }
            return Ok(Shard { index: id, count });
        }
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let slurm_count = match (number("SLURM_ARRAY_TASK_COUNT")?, number("SLURM_ARRAY_TASK_MAX")?) {
            (Some(n), _) => n,
            (None, Some(max)) if max >= min => max - min + 1,
            _ => return Err(
                "shard auto: SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX is; is this an array job (sbatch --array)?".into(),
            ),
        };
        let slurm_count = count_in_range(slurm_count, "the Slurm array's task count")?;
        let index = id.checked_sub(min).filter(|&i| i < slurm_count).ok_or_else(|| {
            format!("shard auto: SLURM_ARRAY_TASK_ID {id} lies outside the array ({min} and {slurm_count} tasks on)")
        })?;
        return Ok(Shard { index, count: slurm_count });
    }
    if let Some(index) = number("JOB_COMPLETION_INDEX")? {
        let count = match (count, number("PLANET_SHARD_COUNT")?) {
            (Some(c), _) | (None, Some(c)) => count_in_range(c, "the shard count")?,
            (None, None) => return Err(
                "shard auto: a Kubernetes Indexed Job gives JOB_COMPLETION_INDEX but not the count; pass --count N (the Job's completions) or set PLANET_SHARD_COUNT".into(),
            ),
        };
        if index >= count {
            return Err(format!("shard auto: JOB_COMPLETION_INDEX {index} is not below the shard count {count}"));
        }
        return Ok(Shard { index, count });
    }
    Err("shard auto: neither a Slurm array task (SLURM_ARRAY_TASK_ID) nor a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) is in the environment; give I/N".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn explicit_parts_parse_and_out_of_range_ones_say_why() {
        assert_eq!(shard("2/4"), Ok(ShardArg::Given(Shard { index: 2, count: 4 })));
        assert_eq!(shard("auto"), Ok(ShardArg::Auto));
        for (bad, says) in [("4/4", "below the count"), ("0/0", "1 to"), ("x/3", "whole number"), ("3", "I/N")] {
            let e = shard(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn schedulers_environments_give_the_part() {
        type Case<'a> = (&'a [(&'a str, &'a str)], Option<u32>, Result<(u32, u32), &'a str>);
        let cases: [Case; 10] = [
            (&[("SLURM_ARRAY_TASK_ID", "3"), ("SLURM_ARRAY_TASK_COUNT", "4")], None, Ok((3, 4))),
            (
                &[("SLURM_ARRAY_TASK_ID", "5"), ("SLURM_ARRAY_TASK_MIN", "2"), ("SLURM_ARRAY_TASK_MAX", "5")],
                None,
                Ok((3, 4)),
            ),
            (
                &[("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_COUNT", "1"), ("SLURM_ARRAY_TASK_MIN", "2")],
                Some(4),
                Ok((2, 4)),
            ),
            (&[("SLURM_ARRAY_TASK_ID", "1")], None, Err("array job")),
            (
                &[("SLURM_ARRAY_TASK_ID", "4"), ("SLURM_ARRAY_TASK_STEP", "2"), ("SLURM_ARRAY_TASK_COUNT", "3")],
                None,
                Err("step"),
            ),
            (&[("SLURM_ARRAY_TASK_ID", "4"), ("SLURM_ARRAY_TASK_COUNT", "5")], Some(4), Err("not below")),
            (&[("JOB_COMPLETION_INDEX", "7")], Some(8), Ok((7, 8))),
            (&[("JOB_COMPLETION_INDEX", "0"), ("PLANET_SHARD_COUNT", "2")], None, Ok((0, 2))),
            (&[("JOB_COMPLETION_INDEX", "2")], None, Err("--count")),
            (&[], None, Err("neither")),
        ];
        for (vars, count, want) in cases {
            let got = shard_from_scheduler(count, env(vars)).map(|s| (s.index, s.count));
            match want {
                Ok(w) => assert_eq!(got, Ok(w), "{vars:?}"),
                Err(says) => assert!(got.as_ref().is_err_and(|e| e.contains(says)), "{vars:?}: {got:?}"),
            }
        }
    }
}
