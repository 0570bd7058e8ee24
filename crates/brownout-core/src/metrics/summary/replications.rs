//! Means, intervals and paired comparisons over the replications of a run.

use serde::{Deserialize, Serialize};

use super::{nan_if_null, nan_pair_if_null, nan_vec_if_null};

/// Every policy set run on the same seeds (common random numbers), with 95 % Student-t
/// intervals of each catalogue metric and paired comparisons (`brownout run --replications`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Replications {
    /// Replications per policy set (at least 2).
    pub count: u32,
    /// Each replication's seed; replication 0 is the root seed, whose figures `runs` holds.
    pub seeds: Vec<u64>,
    /// Per policy set, in scenario order.
    pub runs: Vec<ReplicatedRun>,
    /// One per metric with a direction (per class for a class metric): which set is best and
    /// whether the replications support it.
    pub comparisons: Vec<Comparison>,
    /// The rule every comparison followed, in words (`stats::RULE`; each comparison has its
    /// margin).
    #[serde(default)]
    pub rule: String,
}

/// One policy set's metrics over the replications.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReplicatedRun {
    /// Policy set label.
    pub policy: String,
    /// Every catalogue metric the runs have (per class metrics once per class).
    pub metrics: Vec<MetricInterval>,
}

/// A metric's mean over the replications and its 95 % Student-t interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetricInterval {
    /// Catalogue name (`metrics::catalogue`).
    pub metric: String,
    /// The class of a per-class metric; absent for a per-run metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Mean over the replications.
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// 95 % confidence interval of the mean, `[lo, hi]`.
    #[serde(deserialize_with = "nan_pair_if_null")]
    pub ci95: [f64; 2],
    /// Each replication's value, in the order of [`Replications::seeds`] (`null` where the
    /// figure has no value in that replication), so two folders run on the same seeds can be
    /// compared seed by seed (`brownout diff`). Empty in summaries written before it existed.
    #[serde(default, deserialize_with = "nan_vec_if_null")]
    pub values: Vec<f64>,
}

/// The best policy set on one metric and its paired differences to every other set.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    /// Catalogue name.
    pub metric: String,
    /// The class of a per-class metric; absent for a per-run metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// The set with the best mean in the metric's direction (the first such in scenario order).
    pub best: String,
    /// Every paired difference to `best` has a 95 % interval wholly beyond the margin:
    /// `best` is better than every other set. Otherwise the sets whose interval reaches
    /// inside the margin tie with it.
    pub significant: bool,
    /// The practical-equivalence margin the differences were judged against, in the metric's
    /// unit (the catalogue's, or the scenario's `statistics.margins`).
    #[serde(default, deserialize_with = "nan_if_null")]
    pub margin: f64,
    /// Why the metric is not ranked at all (no best, no star, no tie), e.g. `"not comparable:
    /// answered 1,200 vs 35"` for a latency of answers between sets that answered different
    /// numbers of requests; absent when ranked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unranked: Option<String>,
    /// `best` minus each other set, paired by seed, in scenario order.
    pub versus: Vec<PairedDifference>,
}

/// The mean of `best - policy` over the replications, seed by seed, and its 95 % interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairedDifference {
    /// The other policy set.
    pub policy: String,
    /// Mean difference.
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// 95 % confidence interval of the mean difference, `[lo, hi]`.
    #[serde(deserialize_with = "nan_pair_if_null")]
    pub ci95: [f64; 2],
    /// Degrees of freedom of the interval (pairs used minus one); absent under two pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub df: Option<usize>,
    /// The interval lies wholly beyond the comparison's margin on one side: the two differ.
    /// (Called `excludes_zero` before margins; read under that name from older files.)
    #[serde(alias = "excludes_zero")]
    pub differs: bool,
}
