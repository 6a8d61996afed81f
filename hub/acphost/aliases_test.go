package acphost

import acp "github.com/coder/acp-go-sdk"

type (
	acpPermissionOption = acp.PermissionOption
	acpKind             = acp.PermissionOptionKind
	acpOptionID         = acp.PermissionOptionId
)
