"""Drop-in runtimes for harnesses that run generated code in subprocesses:

- runbox.adapters.rlm.LocalSandboxRuntime: rlm-code's ``execute(request)``;
- runbox.adapters.slop.LocalRuntime: slop-code-bench's SubmissionRuntime
  (``spawn``, ``execute``, ``stream``, ``poll``, ``kill``, ``wait``,
  ``cleanup``).
"""
