//! The residual policy/value network.
//!
//! Parameter names (they are the checkpoint keys, and match the PyTorch mirror in
//! `tests/py/crosscheck.py` attribute for attribute):
//!
//! ```text
//! stem.conv.weight                      [C, input_planes, K, K]   (no bias: BN follows; K = stem_kernel)
//! stem.bn.{weight,bias,running_mean,running_var}
//! tower.{i}.conv1.weight / tower.{i}.bn1.*      i = 0..blocks
//! tower.{i}.conv2.weight / tower.{i}.bn2.*
//! tower.{i}.se.fc1.{weight,bias}        [C/4 (min 1), C]   (only when se = true)
//! tower.{i}.se.fc2.{weight,bias}        [C, C/4]
//! policy.conv.weight                    [C, C, 3, 3]
//! policy.bn.*
//! policy.out.{weight,bias}              [policy_planes, C, 1, 1]
//! policy.opponent.{weight,bias}         [policy_planes, C, 1, 1]   (only when opponent_policy = true)
//! value.conv.weight                     [value_channels, C, 1, 1]
//! value.bn.*
//! value.fc1.{weight,bias}               [value_hidden, value_channels*H*W]   (2*value_channels when value_pool = true)
//! value.fc2.{weight,bias}               [3, value_hidden]     (win, draw, loss logits)
//! material.fc.{weight,bias}             [1, value_hidden]     (only when material_head = true)
//! ```
//!
//! The pooled value head (`value_pool`, KataGo's global pooling): the value
//! convolution's channels are averaged and maxed over the board before the fully
//! connected layers, so "a piece hangs somewhere" is one feature with weights shared by
//! every square, where the flat head must learn it square by square.
//!
//! The material head is an auxiliary training target (KataGo's score head, in shogi's
//! units): from the value head's hidden layer it predicts the side to move's material
//! balance a few plies later, `tanh`-squashed into -1..1. Play never reads it.
//!
//! The opponent-policy head is another auxiliary target (KataGo's: 1.3 times the
//! learning per unit of compute in its ablation): from the policy head's features a second
//! 1x1 convolution predicts the reply the opponent's search chose one ply later, indexed
//! as that position indexes its moves. It gives every position a second policy signal
//! about what its move invites. Play never reads it either.
//!
//! BatchNorm: eps 1e-5, momentum 0.1 (PyTorch defaults). Policy logits are flattened
//! plane-major: `index = plane * H * W + square`, `square = row * W + col`.

use serde::{Deserialize, Serialize};
use tch::nn::{self, ModuleT};
use tch::{Device, Kind, Tensor};

/// Architecture hyper-parameters; stored in every checkpoint manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Number of residual blocks in the tower.
    pub blocks: usize,
    /// Channels (filters) of the tower.
    pub channels: usize,
    /// Input feature planes.
    pub input_planes: usize,
    /// Board height (ranks).
    pub board_h: usize,
    /// Board width (files).
    pub board_w: usize,
    /// Policy planes per square; the policy has `policy_planes * board_h * board_w` logits.
    pub policy_planes: usize,
    /// Channels of the value head's 1x1 convolution.
    #[serde(default = "default_value_channels")]
    pub value_channels: usize,
    /// Hidden width of the value head's fully connected layer.
    pub value_hidden: usize,
    /// Squeeze-and-excitation in each residual block.
    #[serde(default)]
    pub se: bool,
    /// The value head pools its convolution's channels over the board (mean and max)
    /// instead of flattening them (see the module docs).
    #[serde(default)]
    pub value_pool: bool,
    /// The auxiliary material head (training only; see the module docs).
    #[serde(default)]
    pub material_head: bool,
    /// The auxiliary opponent-policy head (training only; see the module docs).
    #[serde(default)]
    pub opponent_policy: bool,
    /// Kernel of the stem convolution (odd): 3, or 1 for inputs of many sparse planes
    /// (tai shogi's 207), where a 3x3 stem costs as much as the whole tower and the
    /// tower's own 3x3 convolutions see the neighbourhood anyway.
    #[serde(default = "default_stem_kernel")]
    pub stem_kernel: usize,
}

fn default_value_channels() -> usize {
    32
}

/// The stem's kernel unless a config says otherwise (AlphaZero's 3x3).
pub const DEFAULT_STEM_KERNEL: usize = 3;

/// Whether `k` is a stem kernel a network may have: odd, 1 to 7 (padding keeps the
/// board's size only for odd kernels).
pub fn valid_stem_kernel(k: usize) -> bool {
    k % 2 == 1 && k <= 7
}

fn default_stem_kernel() -> usize {
    DEFAULT_STEM_KERNEL
}

impl ModelConfig {
    /// A `blocks` x `channels` network over `input_planes` planes of a `board` (height,
    /// width) with `policy_planes` policy planes per square; small heads (2 value
    /// channels, 8 hidden), squeeze-and-excitation, a 3x3 stem. What tests and tools build
    /// by hand, changing any field with `..` (a game's network comes from its layout:
    /// `model_config_for_layout`).
    pub fn small(
        blocks: usize,
        channels: usize,
        input_planes: usize,
        (board_h, board_w): (usize, usize),
        policy_planes: usize,
    ) -> ModelConfig {
        ModelConfig {
            blocks,
            channels,
            input_planes,
            board_h,
            board_w,
            policy_planes,
            value_channels: 2,
            value_hidden: 8,
            se: true,
            value_pool: false,
            material_head: false,
            opponent_policy: false,
            stem_kernel: 3,
        }
    }

    /// Squares on the board.
    pub fn squares(&self) -> usize {
        self.board_h * self.board_w
    }
    /// Length of the policy logit vector.
    pub fn policy_size(&self) -> usize {
        self.policy_planes * self.squares()
    }
    /// Floats per position in the trainer's value target buffer: win/draw/loss, and the
    /// material target when the network has the head.
    pub fn value_target_width(&self) -> usize {
        3 + usize::from(self.material_head)
    }
    /// Floats per position in an input buffer.
    pub fn input_size(&self) -> usize {
        self.input_planes * self.squares()
    }
    /// Hidden width of the squeeze-excitation bottleneck.
    pub fn se_hidden(&self) -> usize {
        (self.channels / 4).max(1)
    }
    /// Inputs of the value head's first fully connected layer: every square's channels,
    /// or their mean and max over the board ([`ModelConfig::value_pool`]).
    pub fn value_features(&self) -> usize {
        if self.value_pool {
            2 * self.value_channels
        } else {
            self.value_channels * self.squares()
        }
    }

    /// Human-readable list of the fields that differ (`name: self vs other`), by their
    /// serialised names in name order: every field is compared, a new one too, without
    /// a list to keep up to date.
    pub fn diff(&self, other: &ModelConfig) -> Vec<String> {
        let fields = |config: &ModelConfig| match serde_json::to_value(config) {
            Ok(serde_json::Value::Object(fields)) => fields,
            _ => unreachable!("a ModelConfig serialises to an object"),
        };
        let theirs = fields(other);
        fields(self)
            .into_iter()
            .filter_map(|(name, mine)| {
                let their = &theirs[&name];
                (mine != *their).then(|| format!("{name}: {mine} vs {their}"))
            })
            .collect()
    }

    /// Largest value of each dimension [`ModelConfig::validate`] accepts (far above any
    /// network this project trains: tai shogi is 25x25 with 306 policy planes).
    pub const LIMITS: [(&'static str, usize); 8] = [
        ("blocks", 512),
        ("channels", 4096),
        ("input_planes", 4096),
        ("board_h", 64),
        ("board_w", 64),
        ("policy_planes", 4096),
        ("value_channels", 4096),
        ("value_hidden", 65536),
    ];

    /// Most parameters (elements of all tensors) a valid network may have: 2^31, 8 GiB
    /// of f32.
    pub const MAX_PARAMETERS: u64 = 1 << 31;

    /// Refuses zero-sized dimensions, dimensions above [`ModelConfig::LIMITS`] and
    /// networks above [`ModelConfig::MAX_PARAMETERS`], so a manifest cannot make the
    /// loader allocate without bound.
    pub fn validate(&self) -> Result<(), String> {
        let dims = [
            ("blocks", self.blocks),
            ("channels", self.channels),
            ("input_planes", self.input_planes),
            ("board_h", self.board_h),
            ("board_w", self.board_w),
            ("policy_planes", self.policy_planes),
            ("value_channels", self.value_channels),
            ("value_hidden", self.value_hidden),
        ];
        if !valid_stem_kernel(self.stem_kernel) {
            return Err(format!(
                "model config: stem_kernel = {} must be odd, 1 to 7",
                self.stem_kernel
            ));
        }
        for ((name, v), (_, max)) in dims.into_iter().zip(Self::LIMITS) {
            if v == 0 && name != "blocks" {
                return Err(format!("model config: {name} must be > 0"));
            }
            if v > max {
                return Err(format!("model config: {name} = {v} exceeds {max}"));
            }
        }
        let total: u64 = self
            .parameter_shapes()
            .values()
            .map(|s| s.iter().map(|&d| d as u64).product::<u64>())
            .sum();
        if total > Self::MAX_PARAMETERS {
            return Err(format!(
                "model config: {total} parameters exceed {}",
                Self::MAX_PARAMETERS
            ));
        }
        Ok(())
    }

    /// Name and shape of every variable of the network (the checkpoint's tensors), without
    /// building it. Call on a config whose dimensions are within [`ModelConfig::LIMITS`]
    /// (no product overflows then).
    pub fn parameter_shapes(&self) -> std::collections::BTreeMap<String, Vec<i64>> {
        let mut out = std::collections::BTreeMap::new();
        let (c, vc) = (self.channels as i64, self.value_channels as i64);
        let mut add = |name: String, shape: Vec<i64>| {
            out.insert(name, shape);
        };
        let bn = |add: &mut dyn FnMut(String, Vec<i64>), p: &str, n: i64| {
            for t in ["weight", "bias", "running_mean", "running_var"] {
                add(format!("{p}.{t}"), vec![n]);
            }
        };
        let k = self.stem_kernel as i64;
        add(
            "stem.conv.weight".into(),
            vec![c, self.input_planes as i64, k, k],
        );
        bn(&mut add, "stem.bn", c);
        for i in 0..self.blocks {
            for k in 1..=2 {
                add(format!("tower.{i}.conv{k}.weight"), vec![c, c, 3, 3]);
                bn(&mut add, &format!("tower.{i}.bn{k}"), c);
            }
            if self.se {
                let h = self.se_hidden() as i64;
                add(format!("tower.{i}.se.fc1.weight"), vec![h, c]);
                add(format!("tower.{i}.se.fc1.bias"), vec![h]);
                add(format!("tower.{i}.se.fc2.weight"), vec![c, h]);
                add(format!("tower.{i}.se.fc2.bias"), vec![c]);
            }
        }
        add("policy.conv.weight".into(), vec![c, c, 3, 3]);
        bn(&mut add, "policy.bn", c);
        let pp = self.policy_planes as i64;
        add("policy.out.weight".into(), vec![pp, c, 1, 1]);
        add("policy.out.bias".into(), vec![pp]);
        if self.opponent_policy {
            add("policy.opponent.weight".into(), vec![pp, c, 1, 1]);
            add("policy.opponent.bias".into(), vec![pp]);
        }
        add("value.conv.weight".into(), vec![vc, c, 1, 1]);
        bn(&mut add, "value.bn", vc);
        let vh = self.value_hidden as i64;
        add(
            "value.fc1.weight".into(),
            vec![vh, self.value_features() as i64],
        );
        add("value.fc1.bias".into(), vec![vh]);
        add("value.fc2.weight".into(), vec![3, vh]);
        add("value.fc2.bias".into(), vec![3]);
        if self.material_head {
            add("material.fc.weight".into(), vec![1, vh]);
            add("material.fc.bias".into(), vec![1]);
        }
        out
    }
}

fn conv(p: nn::Path<'_>, cin: usize, cout: usize, k: i64, bias: bool) -> nn::Conv2D {
    let cfg = nn::ConvConfig {
        padding: k / 2,
        bias,
        ..Default::default()
    };
    nn::conv2d(p, cin as i64, cout as i64, k, cfg)
}

fn bn(p: nn::Path<'_>, c: usize) -> nn::BatchNorm {
    bn_with_scale(p, c, 1.0)
}

/// Every batch norm's epsilon (PyTorch's default; the inference net folds it in).
pub(crate) const BN_EPS: f64 = 1e-5;

/// Batch norm whose scale (gamma) starts at `gamma`.
fn bn_with_scale(p: nn::Path<'_>, c: usize, gamma: f64) -> nn::BatchNorm {
    let cfg = nn::BatchNormConfig {
        ws_init: nn::Init::Const(gamma),
        bs_init: nn::Init::Const(0.0),
        eps: BN_EPS,
        momentum: 0.1,
        ..Default::default()
    };
    nn::batch_norm2d(p, c as i64, cfg)
}

#[derive(Debug)]
pub(crate) struct ConvBn {
    pub(crate) conv: nn::Conv2D,
    pub(crate) bn: nn::BatchNorm,
}

/// `conv` applied to `xs` with its products in `kind`: the layer's own f32 by default;
/// in bf16 for mixed-precision training on a CPU (the weights stay f32 and are cast for
/// the product, the output comes back in f32 for the batch norm, so autograd's gradients
/// reach the f32 weights). Every convolution here is stride 1, padding `k / 2`.
fn conv_in(conv: &nn::Conv2D, xs: &Tensor, kind: Kind) -> Tensor {
    if kind == Kind::Float {
        return xs.apply(conv);
    }
    let size = conv.ws.size();
    let padding = [size[2] / 2, size[3] / 2];
    xs.to_kind(kind)
        .conv2d(
            &conv.ws.to_kind(kind),
            conv.bs.as_ref().map(|b| b.to_kind(kind)).as_ref(),
            [1, 1],
            padding,
            [1, 1],
            1,
        )
        .to_kind(Kind::Float)
}

impl ConvBn {
    /// Pre-activation output: conv (its products in `kind`, [`conv_in`]) then BN (no
    /// ReLU).
    fn forward_t(&self, xs: &Tensor, train: bool, kind: Kind) -> Tensor {
        conv_in(&self.conv, xs, kind).apply_t(&self.bn, train)
    }
}

#[derive(Debug)]
pub(crate) struct SqueezeExcite {
    pub(crate) fc1: nn::Linear,
    pub(crate) fc2: nn::Linear,
}

impl SqueezeExcite {
    fn new(p: nn::Path<'_>, channels: usize, hidden: usize) -> Self {
        let fc1 = nn::linear(
            &p / "fc1",
            channels as i64,
            hidden as i64,
            Default::default(),
        );
        let fc2 = nn::linear(
            &p / "fc2",
            hidden as i64,
            channels as i64,
            Default::default(),
        );
        Self { fc1, fc2 }
    }

    pub(crate) fn forward(&self, xs: &Tensor) -> Tensor {
        let (b, c) = (xs.size()[0], xs.size()[1]);
        let s = xs
            .mean_dim([2i64, 3].as_slice(), false, None::<Kind>)
            .apply(&self.fc1)
            .relu()
            .apply(&self.fc2)
            .sigmoid()
            .view([b, c, 1, 1]);
        xs * s
    }
}

#[derive(Debug)]
pub(crate) struct ResBlock {
    pub(crate) conv1: ConvBn,
    pub(crate) conv2: ConvBn,
    pub(crate) se: Option<SqueezeExcite>,
}

impl ResBlock {
    fn new(p: nn::Path<'_>, cfg: &ModelConfig) -> Self {
        let c = cfg.channels;
        let conv1 = ConvBn {
            conv: conv(&p / "conv1", c, c, 3, false),
            bn: bn(&p / "bn1", c),
        };
        // The block's last scale starts at zero (Goyal et al. 2017, torchvision's
        // `zero_init_residual`): a fresh block is the identity. With scale 1 each block
        // doubles the trunk's variance while the batch norms still hold their initial
        // statistics (every network until its first learner step), so a fresh 20-block
        // net put out logits of about +-5,000 (one-hot priors, certain values), and
        // its searches ran down one line.
        let conv2 = ConvBn {
            conv: conv(&p / "conv2", c, c, 3, false),
            bn: bn_with_scale(&p / "bn2", c, 0.0),
        };
        let se = cfg
            .se
            .then(|| SqueezeExcite::new(&p / "se", c, cfg.se_hidden()));
        Self { conv1, conv2, se }
    }

    fn forward_t(&self, xs: &Tensor, train: bool, kind: Kind) -> Tensor {
        // In-place ReLUs (as torchvision's ResNet): each overwrites a fresh BN or sum
        // output that nothing else holds, so autograd is unaffected and a buffer per
        // activation is saved.
        let h = self.conv1.forward_t(xs, train, kind).relu_();
        let mut h = self.conv2.forward_t(&h, train, kind);
        if let Some(se) = &self.se {
            h = se.forward(&h);
        }
        (h + xs).relu_()
    }
}

/// The network. Build it on a [`nn::Path`] (normally `vs.root()`), call
/// [`Net::forward_t`].
#[derive(Debug)]
pub struct Net {
    config: ModelConfig,
    pub(crate) stem: ConvBn,
    pub(crate) tower: Vec<ResBlock>,
    pub(crate) policy_conv: ConvBn,
    pub(crate) policy_out: nn::Conv2D,
    pub(crate) value_conv: ConvBn,
    pub(crate) value_fc1: nn::Linear,
    pub(crate) value_fc2: nn::Linear,
    material_fc: Option<nn::Linear>,
    opponent_out: Option<nn::Conv2D>,
}

/// Every output of one forward pass: what play reads and the training-only heads.
#[derive(Debug)]
pub struct Heads {
    /// Policy logits `[B, policy_planes*H*W]`.
    pub policy: Tensor,
    /// Win/draw/loss logits `[B, 3]` from the side to move's view.
    pub value: Tensor,
    /// The material head's prediction `[B]` in -1..1 (`None` without the head).
    pub material: Option<Tensor>,
    /// The opponent-policy head's logits `[B, policy_planes*H*W]` (`None` without it).
    pub opponent_policy: Option<Tensor>,
}

impl Net {
    /// Creates the parameters under `p` (see the module docs for their names).
    ///
    /// # Panics
    /// If `config` has a zero-sized dimension (see [`ModelConfig::validate`]).
    pub fn new(p: &nn::Path<'_>, config: &ModelConfig) -> Self {
        if let Err(e) = config.validate() {
            panic!("{e}");
        }
        let c = config.channels;
        let stem = ConvBn {
            conv: conv(
                p / "stem" / "conv",
                config.input_planes,
                c,
                config.stem_kernel as i64,
                false,
            ),
            bn: bn(p / "stem" / "bn", c),
        };
        let tp = p / "tower";
        let tower = (0..config.blocks)
            .map(|i| ResBlock::new(&tp / i, config))
            .collect();
        let policy_conv = ConvBn {
            conv: conv(p / "policy" / "conv", c, c, 3, false),
            bn: bn(p / "policy" / "bn", c),
        };
        let policy_out = conv(p / "policy" / "out", c, config.policy_planes, 1, true);
        let opponent_out = config
            .opponent_policy
            .then(|| conv(p / "policy" / "opponent", c, config.policy_planes, 1, true));
        let vc = config.value_channels;
        let value_conv = ConvBn {
            conv: conv(p / "value" / "conv", c, vc, 1, false),
            bn: bn(p / "value" / "bn", vc),
        };
        let value_fc1 = nn::linear(
            p / "value" / "fc1",
            config.value_features() as i64,
            config.value_hidden as i64,
            Default::default(),
        );
        let value_fc2 = nn::linear(
            p / "value" / "fc2",
            config.value_hidden as i64,
            3,
            Default::default(),
        );
        let material_fc = config.material_head.then(|| {
            nn::linear(
                p / "material" / "fc",
                config.value_hidden as i64,
                1,
                Default::default(),
            )
        });
        Self {
            config: config.clone(),
            stem,
            tower,
            policy_conv,
            policy_out,
            value_conv,
            value_fc1,
            value_fc2,
            material_fc,
            opponent_out,
        }
    }

    /// The architecture this net was built with.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// `xs`: `[B, input_planes, H, W]` (a flat `[B, input_planes*H*W]` is reshaped).
    /// Returns `(policy_logits [B, policy_planes*H*W], value_logits [B, 3])`, value order
    /// win / draw / loss from the side to move's point of view.
    pub fn forward_t(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
        let heads = self.heads(xs, train, false, Kind::Float);
        (heads.policy, heads.value)
    }

    /// [`Net::forward_t`] plus the training-only heads' outputs (`None` for a head the
    /// network lacks): what the trainer needs.
    pub fn forward_heads(&self, xs: &Tensor, train: bool) -> Heads {
        self.heads(xs, train, true, Kind::Float)
    }

    /// [`Net::forward_heads`] with the convolutions' products in `conv_kind` (bf16 for
    /// mixed-precision training on a CPU); batch norms, sums, the value head's linear
    /// layers and every output stay f32.
    pub fn forward_heads_in(&self, xs: &Tensor, train: bool, conv_kind: Kind) -> Heads {
        self.heads(xs, train, true, conv_kind)
    }

    fn heads(&self, xs: &Tensor, train: bool, auxiliary: bool, kind: Kind) -> Heads {
        crate::threads::apply_num_threads();
        let cfg = &self.config;
        let (h, w) = (cfg.board_h as i64, cfg.board_w as i64);
        let xs = xs.view([-1, cfg.input_planes as i64, h, w]);
        let mut t = self.stem.forward_t(&xs, train, kind).relu_();
        for block in &self.tower {
            t = block.forward_t(&t, train, kind);
        }
        let policy_features = self.policy_conv.forward_t(&t, train, kind).relu();
        let policy = conv_in(&self.policy_out, &policy_features, kind).flatten(1, -1);
        let opponent_policy = match (&self.opponent_out, auxiliary) {
            (Some(out), true) => Some(conv_in(out, &policy_features, kind).flatten(1, -1)),
            _ => None,
        };
        let value_map = self.value_conv.forward_t(&t, train, kind).relu();
        let value_features = value_features(&value_map, cfg.value_pool);
        let hidden = value_features.apply(&self.value_fc1).relu();
        let value = hidden.apply(&self.value_fc2);
        let material = match (&self.material_fc, auxiliary) {
            (Some(fc), true) => Some(hidden.apply(fc).view([-1]).tanh()),
            _ => None,
        };
        Heads {
            policy,
            value,
            material,
            opponent_policy,
        }
    }
}

/// The value head's input from its convolution's map `[B, channels, H, W]`: each
/// channel's mean and max over the board (`pool`), or every square's channels.
pub(crate) fn value_features(value_map: &Tensor, pool: bool) -> Tensor {
    if pool {
        let squares = [2i64, 3];
        let mean = value_map.mean_dim(squares.as_slice(), false, None::<Kind>);
        let max = value_map.amax(squares.as_slice(), false);
        Tensor::cat(&[mean, max], 1)
    } else {
        value_map.flatten(1, -1)
    }
}

/// `ModuleT` view of the net: returns `cat([policy_logits, value_logits], 1)`, i.e.
/// `[B, policy_size + 3]`. Prefer [`Net::forward_t`].
impl ModuleT for Net {
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        let (p, v) = Net::forward_t(self, xs, train);
        Tensor::cat(&[p, v], 1)
    }
}

/// A [`Net`] together with the [`nn::VarStore`] that owns its parameters.
#[derive(Debug)]
pub struct Model {
    /// Owns the parameters (checkpoint keys are its variable names).
    pub vs: nn::VarStore,
    /// The network, whose tensors are shallow copies of `vs`'s variables.
    pub net: Net,
}

impl Model {
    /// Freshly initialised model on `device`.
    pub fn new(config: &ModelConfig, device: Device) -> Self {
        let vs = nn::VarStore::new(device);
        let net = Net::new(&vs.root(), config);
        Self { vs, net }
    }

    /// The architecture.
    pub fn config(&self) -> &ModelConfig {
        self.net.config()
    }

    /// See [`Net::forward_t`].
    pub fn forward_t(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
        self.net.forward_t(xs, train)
    }

    /// See [`Net::forward_heads`].
    pub fn forward_heads(&self, xs: &Tensor, train: bool) -> Heads {
        self.net.forward_heads(xs, train)
    }

    /// See [`Net::forward_heads_in`].
    pub fn forward_heads_in(&self, xs: &Tensor, train: bool, conv_kind: Kind) -> Heads {
        self.net.forward_heads_in(xs, train, conv_kind)
    }

    /// Device of the parameters.
    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// An independent copy of this model (same architecture, same parameter and BN-statistic
    /// values, float32) on `device`, e.g. to hand the trainer's current weights to an
    /// [`crate::Inference`] without going through a checkpoint.
    pub fn copy_to(&self, device: Device) -> Result<Model, tch::TchError> {
        let mut copy = Model::new(self.config(), device);
        copy.vs.copy(&self.vs)?;
        Ok(copy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn tiny(se: bool) -> ModelConfig {
        ModelConfig {
            value_hidden: 16,
            se,
            ..ModelConfig::small(2, 8, 3, (5, 4), 6)
        }
    }

    #[test]
    fn shapes_and_names() {
        for se in [false, true] {
            let cfg = tiny(se);
            let m = Model::new(&cfg, Device::Cpu);
            let xs = Tensor::randn([7, 3, 5, 4], (Kind::Float, Device::Cpu));
            let (p, v) = m.forward_t(&xs, false);
            assert_eq!(p.size(), vec![7, 6 * 20]);
            assert_eq!(v.size(), vec![7, 3]);
            let (p, v) = m.forward_t(&xs.view([7, 60]), true);
            assert_eq!(p.size(), vec![7, 120]);
            assert_eq!(v.size(), vec![7, 3]);
            let vars = m.vs.variables();
            for name in [
                "stem.conv.weight",
                "stem.bn.running_var",
                "tower.1.conv2.weight",
                "tower.0.bn1.bias",
                "policy.out.bias",
                "value.fc2.weight",
            ] {
                assert!(vars.contains_key(name), "missing {name}");
            }
            assert_eq!(vars.contains_key("tower.1.se.fc2.weight"), se);
            assert_eq!(vars["value.fc1.weight"].size(), vec![16, 2 * 20]);
            assert!(!vars.contains_key("stem.conv.bias"));
        }
    }

    /// Every network plays its first games before a learner step has moved its batch
    /// norms' statistics, so its outputs must not grow with depth: with each block's
    /// last scale at 1 a fresh 20-block net gave logits of +-5,000 and certain values.
    #[test]
    fn a_fresh_deep_network_is_calibrated_in_eval_mode() {
        for (blocks, se) in [(2, false), (20, false), (20, true)] {
            let cfg = ModelConfig {
                blocks,
                channels: 32,
                ..tiny(se)
            };
            tch::manual_seed(0);
            let m = Model::new(&cfg, Device::Cpu);
            let xs = Tensor::rand([16, 3, 5, 4], (Kind::Float, Device::Cpu)).round();
            let (p, v) = m.forward_t(&xs, false);
            let largest = p.abs().max().double_value(&[]);
            assert!(largest < 10.0, "{blocks} blocks: logits reach {largest}");
            // The value logits likewise (at most about 5 over 40 seeds of these nets; the
            // bound holds whatever other tests draw from libtorch's shared generator).
            let value_largest = v.abs().max().double_value(&[]);
            assert!(
                value_largest < 10.0,
                "{blocks} blocks: value logits reach {value_largest}"
            );
            // Still trainable: a block's last scale gets gradient although it starts at 0.
            let (p, _) = m.forward_t(&xs, true);
            p.pow_tensor_scalar(2).sum(Kind::Float).backward();
            let grad = m.vs.variables()["tower.1.bn2.weight"].grad();
            assert!(grad.abs().sum(Kind::Float).double_value(&[]) > 0.0);
        }
    }

    /// The pooled value head reads each value channel's mean and max over the board: its
    /// first layer has 2 x value_channels inputs whatever the board's size, and a change
    /// confined to one square moves the value through those two numbers only.
    #[test]
    fn the_pooled_value_head_has_two_features_a_channel() {
        for (h, w) in [(5, 4), (9, 9)] {
            let cfg = ModelConfig {
                value_pool: true,
                board_h: h,
                board_w: w,
                ..tiny(false)
            };
            let m = Model::new(&cfg, Device::Cpu);
            assert_eq!(cfg.value_features(), 4);
            assert_eq!(m.vs.variables()["value.fc1.weight"].size(), vec![16, 4]);
            let xs = Tensor::randn([7, 3, h as i64, w as i64], (Kind::Float, Device::Cpu));
            let (p, v) = m.forward_t(&xs, false);
            assert_eq!(p.size(), vec![7, 6 * (h * w) as i64]);
            assert_eq!(v.size(), vec![7, 3]);
        }
        let flat = tiny(false);
        assert_eq!(flat.value_features(), 2 * 20);
        assert_eq!(
            flat.diff(&ModelConfig {
                value_pool: true,
                ..tiny(false)
            }),
            vec!["value_pool: false vs true"]
        );
    }

    #[test]
    fn the_material_head_is_one_more_output_in_minus_one_to_one() {
        let cfg = ModelConfig {
            material_head: true,
            ..tiny(false)
        };
        let m = Model::new(&cfg, Device::Cpu);
        let xs = Tensor::randn([7, 3, 5, 4], (Kind::Float, Device::Cpu)) * 50.0;
        let Heads {
            policy: p,
            value: v,
            material,
            opponent_policy,
        } = m.forward_heads(&xs, false);
        assert!(opponent_policy.is_none());
        let material = material.expect("a material head");
        assert_eq!(material.size(), vec![7]);
        let max = f64::try_from(material.abs().max()).unwrap();
        assert!(max <= 1.0, "tanh-squashed: {max}");
        // Play reads the same policy and value as without the head's output.
        let (p2, v2) = m.forward_t(&xs, false);
        assert!(p.equal(&p2) && v.equal(&v2));
        assert_eq!(m.vs.variables()["material.fc.weight"].size(), vec![1, 16]);
        let plain = Model::new(&tiny(false), Device::Cpu);
        assert!(plain.forward_heads(&xs, false).material.is_none());
        assert!(!plain.vs.variables().contains_key("material.fc.weight"));
    }

    /// The opponent-policy head reads the policy head's features: as many logits as the
    /// policy, its own weights, and play's outputs unchanged by it.
    #[test]
    fn the_opponent_policy_head_is_a_second_policy_output() {
        let cfg = ModelConfig {
            opponent_policy: true,
            ..tiny(false)
        };
        tch::manual_seed(3);
        let m = Model::new(&cfg, Device::Cpu);
        let xs = Tensor::randn([7, 3, 5, 4], (Kind::Float, Device::Cpu));
        let heads = m.forward_heads(&xs, false);
        let opponent = heads.opponent_policy.expect("an opponent-policy head");
        assert_eq!(opponent.size(), vec![7, 6 * 20]);
        assert!(heads.material.is_none());
        assert!(!opponent.equal(&heads.policy), "its own output layer");
        let (p, v) = m.forward_t(&xs, false);
        assert!(p.equal(&heads.policy) && v.equal(&heads.value));
        assert_eq!(
            m.vs.variables()["policy.opponent.weight"].size(),
            vec![6, 8, 1, 1]
        );
        let plain = Model::new(&tiny(false), Device::Cpu);
        assert!(plain.forward_heads(&xs, false).opponent_policy.is_none());
        assert!(!plain.vs.variables().contains_key("policy.opponent.weight"));
    }

    #[test]
    fn parameter_shapes_are_the_built_networks() {
        for (se, material_head, value_pool, opponent_policy) in [
            (false, false, false, false),
            (true, false, false, false),
            (false, true, false, false),
            (false, true, true, false),
            (true, false, false, true),
        ] {
            for blocks in [0, 1, 2] {
                let cfg = ModelConfig {
                    blocks,
                    material_head,
                    value_pool,
                    opponent_policy,
                    ..tiny(se)
                };
                let m = Model::new(&cfg, Device::Cpu);
                let built: std::collections::BTreeMap<String, Vec<i64>> =
                    m.vs.variables()
                        .into_iter()
                        .map(|(n, t)| (n, t.size()))
                        .collect();
                assert_eq!(
                    cfg.parameter_shapes(),
                    built,
                    "se {se} material {material_head} pool {value_pool} opponent {opponent_policy} blocks {blocks}"
                );
            }
        }
    }

    #[test]
    fn validate_bounds_every_dimension_and_the_total() {
        assert!(tiny(true).validate().is_ok());
        let huge = ModelConfig {
            channels: 1 << 40,
            ..tiny(true)
        };
        let err = huge.validate().unwrap_err();
        assert!(err.contains("channels") && err.contains("exceeds"), "{err}");
        let zero = ModelConfig {
            value_hidden: 0,
            ..tiny(true)
        };
        assert!(zero.validate().unwrap_err().contains("value_hidden"));
        // Each dimension within its limit, the whole far above MAX_PARAMETERS.
        let big = ModelConfig {
            blocks: 512,
            channels: 4096,
            ..tiny(false)
        };
        let err = big.validate().unwrap_err();
        assert!(err.contains("parameters exceed"), "{err}");
    }

    #[test]
    fn copy_to_is_independent_and_identical() {
        let cfg = tiny(true);
        let a = Model::new(&cfg, Device::Cpu);
        let b = a.copy_to(Device::Cpu).unwrap();
        let xs = Tensor::randn([2, 3, 5, 4], (Kind::Float, Device::Cpu));
        let (pa, va) = tch::no_grad(|| a.forward_t(&xs, false));
        let (pb, vb) = tch::no_grad(|| b.forward_t(&xs, false));
        assert!(pa.equal(&pb) && va.equal(&vb));
        tch::no_grad(|| {
            let mut w = a.vs.variables()["value.fc2.bias"].shallow_clone();
            let _ = w.fill_(5.0);
        });
        let sum = |m: &Model| {
            f64::try_from(&m.vs.variables()["value.fc2.bias"].sum(Kind::Float)).unwrap()
        };
        assert_eq!(sum(&a), 15.0);
        assert!(sum(&b) < 10.0, "the copy must not share storage");
    }

    #[test]
    fn config_json_roundtrip_and_diff() {
        let a = tiny(true);
        let s = serde_json::to_string(&a).unwrap();
        let b: ModelConfig = serde_json::from_str(&s).unwrap();
        assert_eq!(a, b);
        let mut c = a.clone();
        c.blocks = 9;
        c.se = false;
        let d = a.diff(&c);
        assert_eq!(d, vec!["blocks: 2 vs 9", "se: true vs false"]);
    }
}
