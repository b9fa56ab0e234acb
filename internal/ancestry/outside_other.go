//go:build !linux && !darwin

package ancestry

import "errors"

// Outside cannot be proven on this system: every peer is refused.
func (b Boundary) Outside(int, bool) (Outside, error) {
	return Outside{}, errors.New("admin boundary: " + errUnsupported.Error())
}
