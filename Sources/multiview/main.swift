import Multiview
print("x")
