package sdk

// Failure codes (contract; see DESIGN §4). A failure names exactly one.
const (
	CodeOOMKilled          = "OOM_KILLED"
	CodeCUDAOOM            = "CUDA_OOM"
	CodeMetalOOM           = "METAL_OOM"
	CodeGPUError           = "GPU_ERROR"
	CodeDistributedError   = "DISTRIBUTED_ERROR"
	CodeModuleNotFound     = "MODULE_NOT_FOUND"
	CodeSyntaxError        = "SYNTAX_ERROR"
	CodeCommandNotFound    = "COMMAND_NOT_FOUND"
	CodeFileNotFound       = "FILE_NOT_FOUND"
	CodePermissionDenied   = "PERMISSION_DENIED"
	CodeDiskFull           = "DISK_FULL"
	CodeNetworkError       = "NETWORK_ERROR"
	CodeNaNLoss            = "NAN_LOSS"
	CodeShapeMismatch      = "SHAPE_MISMATCH"
	CodeArgumentError      = "ARGUMENT_ERROR"
	CodeSegfault           = "SEGFAULT"
	CodeAborted            = "ABORTED"
	CodeIllegalInstruction = "ILLEGAL_INSTRUCTION"
	CodeInterrupted        = "INTERRUPTED"
	CodeKilled             = "KILLED"
	CodeTerminated         = "TERMINATED"
	CodeTimeout            = "TIMEOUT"
	CodeStalled            = "STALLED"
	CodeCancelled          = "CANCELLED"
	CodeSmokeFailed        = "SMOKE_FAILED"
	CodeSandboxError       = "SANDBOX_ERROR"
	CodeScriptError        = "SCRIPT_ERROR"
	CodePythonException    = "PYTHON_EXCEPTION"
	CodeNonzeroExit        = "NONZERO_EXIT"
)

// Codes lists every failure code, most specific first as DESIGN §4 orders them.
var Codes = []string{
	CodeOOMKilled, CodeCUDAOOM, CodeMetalOOM, CodeGPUError, CodeDistributedError,
	CodeModuleNotFound, CodeSyntaxError, CodeCommandNotFound, CodeFileNotFound,
	CodePermissionDenied, CodeDiskFull, CodeNetworkError, CodeNaNLoss,
	CodeShapeMismatch, CodeArgumentError, CodeSegfault, CodeAborted,
	CodeIllegalInstruction, CodeInterrupted, CodeKilled, CodeTerminated,
	CodeTimeout, CodeStalled, CodeCancelled, CodeSmokeFailed, CodeSandboxError,
	CodeScriptError, CodePythonException, CodeNonzeroExit,
}

// ValidCode reports whether c is one of Codes.
func ValidCode(c string) bool {
	for _, k := range Codes {
		if k == c {
			return true
		}
	}
	return false
}
