package testenv

import "net"

// FreePorts returns n distinct free loopback ports. All listeners stay open until
// every port is chosen, so the n are distinct; a port can still be taken by someone
// else before the process meant for it binds it, which then fails fast through
// Process.Exited.
func FreePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
