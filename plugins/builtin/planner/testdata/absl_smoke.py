from absl import app
from absl import flags
import jax
import jax.numpy as jnp
import optax

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_steps", 10000, "Number of training steps.")
flags.DEFINE_boolean("smoke_test", False,
                     "Run a tiny smoke test: 2 steps on random data.")
flags.DEFINE_string("workdir", "/tmp/run", "Where to write checkpoints.")


def main(argv):
    del argv
    steps = 2 if FLAGS.smoke_test else FLAGS.num_steps
    params = jnp.zeros((4,))
    opt = optax.adam(1e-3)
    state = opt.init(params)
    for _ in range(steps):
        grads = jax.grad(lambda p: jnp.sum(p ** 2))(params)
        updates, state = opt.update(grads, state)
        params = optax.apply_updates(params, updates)
    print(jax.devices())


if __name__ == "__main__":
    app.run(main)
